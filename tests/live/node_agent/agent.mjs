// A booking agent written in JavaScript, traced with the OpenTelemetry JS SDK and exported over
// OTLP/HTTP, JSON by default or protobuf with PROTO=1: tests/live/test_node_agent.py sends it to
// checkweigh serve. Five requests; the last one's tool call fails. Prints the trace ids.
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { context, trace, SpanStatusCode } from '@opentelemetry/api';

const url = process.env.ENDPOINT + '/v1/traces';
const headers = { Authorization: 'Bearer ' + process.env.TOKEN };
const exporter = process.env.PROTO ? new ProtoExporter({ url, headers }) : new JsonExporter({ url, headers });
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'booking-agent-js' }),
  spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 100 })],
});
const tracer = provider.getTracer('booking-js');
const ids = [];
for (let i = 0; i < 5; i++) {
  const root = tracer.startSpan('invoke_agent booking', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'booking' } });
  ids.push(root.spanContext().traceId);
  const ctx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan('chat gpt-4o-mini', { attributes: {
    'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 12,
    'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Book a sync #${i} with Alice at 10:00` }] }]),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'check_availability', arguments: { who: 'Alice' } }], finish_reason: 'tool_call' }]),
  } }, ctx);
  chat.end();
  const tool = tracer.startSpan('execute_tool check_availability', { attributes: {
    'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'check_availability', 'gen_ai.tool.call.id': 'c1',
    'gen_ai.tool.call.arguments': '{"who":"Alice"}', 'gen_ai.tool.call.result': i === 4 ? '{"error":"calendar down"}' : '{"free":true}',
  } }, ctx);
  if (i === 4) tool.setStatus({ code: SpanStatusCode.ERROR, message: 'calendar down' });
  tool.end();
  const chat2 = tracer.startSpan('chat gpt-4o-mini', { attributes: {
    'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: i === 4 ? 'Sorry, the calendar is down.' : 'Booked your sync with Alice at 10:00.' }], finish_reason: 'stop' }]),
  } }, ctx);
  chat2.end();
  root.end();
}
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify(ids));

#!/usr/bin/env node
// A scheduling agent written in Node (no npm packages), driven by checkweigh as a command
// target: it reads one request as JSON on stdin and writes one reply as JSON on stdout.
//
//   request: {"id": "...", "input": {"message": "..."}, "metadata": {...}}
//            (a conversation turn adds "messages" and "turn"; the newest user message is used)
//   reply:   {"trace": [steps...], "final_state": {...}}
//
// It books meetings for a small team in one working week, checking availability first and
// offering other slots on a conflict. Like the Python example in ../scheduling, it is a
// rule-based stand-in for an LLM agent, with one realistic mistake: a time written "3pm"
// (without minutes) is read as 03:00, which is outside the working day.

"use strict";

const TEAM = ["Alice", "Bob", "Carol", "Dan", "Erin"];
const WEEK = {
  "2025-03-03": "Monday",
  "2025-03-04": "Tuesday",
  "2025-03-05": "Wednesday",
  "2025-03-06": "Thursday",
  "2025-03-07": "Friday",
};
const BUSY = [
  { person: "Alice", date: "2025-03-04", start: "14:00", end: "15:00", title: "Roadmap sync" },
  { person: "Bob", date: "2025-03-05", start: "09:00", end: "11:00", title: "Interviews" },
  { person: "Carol", date: "2025-03-06", start: "10:00", end: "12:00", title: "Hiring panel" },
];
const DAY_START = 9 * 60;
const DAY_END = 17 * 60;

const minutes = (hhmm) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const hhmm = (m) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
const join = (names) =>
  names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;

function parse(message) {
  const date = (message.match(/\b(2025-\d\d-\d\d)\b/) || [])[1] || null;
  let time = null;
  const clock = message.match(/\bat (\d{1,2}):(\d\d)\b/);
  const hourOnly = message.match(/\bat (\d{1,2}) ?(am|pm)\b/i);
  if (clock) time = `${clock[1].padStart(2, "0")}:${clock[2]}`;
  // the deliberate mistake: "3pm" loses its "pm"
  else if (hourOnly) time = `${hourOnly[1].padStart(2, "0")}:00`;
  let duration = 30;
  const mins = message.match(/(\d+)[ -]minute/);
  const hours = message.match(/(\d+)[ -]hour/);
  if (mins) duration = Number(mins[1]);
  else if (hours) duration = Number(hours[1]) * 60;
  const names = [...message.matchAll(/\b([A-Z][a-z]+)\b/g)]
    .map((m) => m[1])
    .filter((w) => !["Book", "Schedule", "Set", "Please", "Can", "With", "On", "At", "March"].includes(w));
  return { date, time, duration, names: [...new Set(names)] };
}

function busyFor(people, date, start, duration) {
  return BUSY.filter(
    (b) =>
      people.includes(b.person) &&
      b.date === date &&
      minutes(b.start) < start + duration &&
      start < minutes(b.end),
  );
}

function schedule(message) {
  const trace = [{ kind: "user", content: message }];
  const context = { booking_confirmed: false, booked_event: null, conflicts: [], proposed_alternatives: [] };
  const state = { success: false, stage: "needs_input", scheduling_context: context, error: null, requested_clarification: false };
  const tool = (name, args, result) => {
    trace.push({ kind: "tool_call", name, arguments: args, result, latency_ms: 12 });
    return result;
  };
  const reply = (text) => {
    trace.push({ kind: "assistant", content: text });
    return { trace, final_state: state };
  };
  const ask = (text, type) => {
    state.requested_clarification = true;
    if (type) state.error = { type, message: text };
    return reply(text);
  };

  const request = parse(message);
  const people = [];
  for (const name of request.names) {
    const found = tool("lookup_person", { name }, { found: TEAM.includes(name), name });
    if (found.found) people.push(name);
    else return ask(`I can't find ${name} on the team (${join(TEAM)}). Who did you mean?`, "unknown_person");
  }
  if (people.length === 0) return ask("Who should attend? I couldn't find anyone from the team in your request.", "missing_participants");
  if (!request.date || !(request.date in WEEK)) return ask("Which day should I book (2025-03-03 to 2025-03-07)?", "invalid_date");
  if (!request.time) return ask(`What time on ${WEEK[request.date]} should the meeting start?`, "missing_time");
  const start = minutes(request.time);
  if (start < DAY_START || start + request.duration > DAY_END) {
    return ask(`${request.time} is outside working hours (09:00-17:00). What time should I use?`, "outside_working_hours");
  }
  const slot = { participants: people, date: request.date, time: request.time, duration: request.duration };
  const busy = tool("check_availability", slot, busyFor(people, request.date, start, request.duration));
  if (busy.length > 0) {
    context.conflicts = busy.map((b) => ({ person: b.person, title: b.title }));
    trace.push({ kind: "event", name: "conflict_detected", content: `${busy[0].person} is busy (${busy[0].title})` });
    const free = [];
    for (let m = start + 30; m + request.duration <= DAY_END && free.length < 2; m += 30) {
      if (busyFor(people, request.date, m, request.duration).length === 0) free.push(hhmm(m));
    }
    context.proposed_alternatives = tool("find_alternatives", { ...slot, after: request.time }, free).map((time) => ({
      date: request.date,
      time,
      duration: request.duration,
    }));
    return reply(`${busy[0].person} is busy then (${busy[0].title}). Everyone is free at ${free.join(" or ")}. Which one should I book?`);
  }
  const event = tool("book_meeting", slot, { event_id: `evt-${request.date}-${request.time}` });
  context.booking_confirmed = true;
  context.booked_event = { ...slot, event_id: event.event_id };
  state.success = true;
  state.stage = "completed";
  return reply(`Booked: ${request.duration} minutes with ${join(people)} on ${WEEK[request.date]} ${request.date} at ${request.time}.`);
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  const users = (request.messages || []).filter((m) => m.role === "user");
  const message = users.length ? users.at(-1).content : String(request.input.message ?? request.input);
  process.stdout.write(JSON.stringify(schedule(message)) + "\n");
});

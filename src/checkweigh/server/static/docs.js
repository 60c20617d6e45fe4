// The API's docs page: Swagger UI, served by the process itself, started from this file
// rather than an inline script (so a Content-Security-Policy of script-src 'self' holds).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });
});

// Starts Swagger UI on the page's <main> (a file of its own: the page's CSP runs no inline script).
const root = document.getElementById('reference');
SwaggerUIBundle({
  url: root.dataset.document,
  domNode: root,
  // No top bar: its box would load any document a link names.
  layout: 'BaseLayout',
  // Its default shows a badge fetched from a public validator.
  validatorUrl: null,
  deepLinking: true,
  docExpansion: 'list',
  filter: true,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
});

// Renders the service's own OpenAPI document with Redoc (its standalone bundle, served beside
// this file). Search is off: it runs in a blob: worker, which the page's CSP does not allow.
/* global Redoc */
Redoc.init(
  '/api/openapi.json',
  { disableSearch: true, expandResponses: '200,201', hideHostname: true, sortPropsAlphabetically: false },
  document.getElementById('api-reference'),
);

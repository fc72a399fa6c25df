// Shared by the page scripts: one way to call the API, one way to show an error, and the
// form check that turns the browser's constraint validation into an inline message.

/** Calls the JSON API. Never throws: a network failure comes back as status 0 with a message. */
export async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, body: { message: 'The server cannot be reached. Check the connection and try again.' }, headers: new Headers() };
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's error page): messageOf falls back to the status.
  }
  return { ok: response.ok, status: response.status, body: data, headers: response.headers };
}

/** The `{message}` of an error response, or a sentence about the status when there is none. */
export function messageOf(result) {
  const message = result.body && typeof result.body.message === 'string' ? result.body.message : '';
  if (!message) return `The request failed (HTTP ${result.status}).`;
  // The API writes messages in lower case for logs; on the page they start a sentence.
  return message[0].toUpperCase() + message.slice(1);
}

/** Alerts are role="alert" live regions that stay in the page; an empty one is hidden by CSS. */
export function setAlert(element, text) {
  element.textContent = text ?? '';
}

function labelOf(input) {
  const label = input.labels && input.labels[0];
  // The label's first text node, without the "(optional)" marker.
  return label ? label.childNodes[0].textContent.trim() : input.name;
}

function problemOf(input) {
  const v = input.validity;
  const name = labelOf(input);
  if (v.valueMissing) return `${name} is required.`;
  if (v.tooShort) return `${name} must be at least ${input.minLength} characters.`;
  if ((v.patternMismatch || v.typeMismatch) && input.dataset.hint) return `${name} ${input.dataset.hint}.`;
  if (v.typeMismatch && input.type === 'email') return `${name} must be an email address.`;
  return `${name}: ${input.validationMessage}`;
}

/**
 * Checks a `novalidate` form with the browser's own constraints (required, minlength, type,
 * pattern) and reports the first problem in the form's alert, so every error looks and reads
 * the same as the server's. Returns true when the form is valid.
 */
export function checkForm(form, alertElement) {
  for (const input of form.querySelectorAll('input')) input.removeAttribute('aria-invalid');
  const invalid = [...form.querySelectorAll('input')].find((input) => !input.checkValidity());
  if (!invalid) return true;
  invalid.setAttribute('aria-invalid', 'true');
  setAlert(alertElement, problemOf(invalid));
  invalid.focus();
  return false;
}

/** Disables a form's buttons while a request runs, so a double click sends one request. */
export async function busy(container, work) {
  const buttons = container.querySelectorAll('button');
  container.setAttribute('aria-busy', 'true');
  for (const button of buttons) button.disabled = true;
  try {
    return await work();
  } finally {
    for (const button of buttons) button.disabled = false;
    container.setAttribute('aria-busy', 'false');
  }
}

// The login page: posts {user, password} to /api/login and follows the redirectUrl it returns. An
// account with a second factor is answered with a challenge instead: the page then asks for a
// code and completes the login at /api/login/mfa.
import { api, busy, checkForm, messageOf, setAlert } from '/assets/api.js';

const form = document.getElementById('login-form');
const alertBox = document.getElementById('login-alert');
const mfaForm = document.getElementById('mfa-form');
const mfaAlert = document.getElementById('mfa-alert');
/** The challenge of a password login waiting for its second factor. */
let challenge = null;

/** The API path of `path` carrying this page's ?redirect, which the API checks and answers as redirectUrl. */
function withRedirect(path) {
  const redirect = new URLSearchParams(window.location.search).get('redirect');
  return redirect ? `${path}?${new URLSearchParams({ redirect })}` : path;
}

function retryMessage(result) {
  let message = messageOf(result);
  const retryAfter = Number.parseInt(result.headers.get('retry-after') ?? '', 10);
  // The wait is shown unless the message already states it.
  if (result.status === 429 && retryAfter > 0 && !message.includes(String(retryAfter))) {
    message += ` Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
  }
  return message;
}

/** Only same-origin paths are followed, so a bad redirectUrl cannot send the user elsewhere. */
function safePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\') ? url : '/';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  // Cleared at once, so a repeated error is announced again and is visibly a new answer.
  setAlert(alertBox, '');
  if (!checkForm(form, alertBox)) return;
  const body = { user: form.elements.user.value.trim(), password: form.elements.password.value };
  const result = await busy(form, () => api('POST', withRedirect('/api/login'), body));
  if (result.ok) {
    window.location.assign(safePath(result.body && result.body.redirectUrl));
    return;
  }
  form.elements.password.value = '';
  if (result.status === 401 && result.body && result.body.mfaRequired === true && typeof result.body.challenge === 'string') {
    challenge = result.body.challenge;
    form.hidden = true;
    mfaForm.hidden = false;
    mfaForm.elements.code.focus();
    return;
  }
  setAlert(alertBox, retryMessage(result));
  form.elements.password.focus();
});

mfaForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  setAlert(mfaAlert, '');
  if (!checkForm(mfaForm, mfaAlert)) return;
  const body = { challenge, code: mfaForm.elements.code.value.trim() };
  const result = await busy(mfaForm, () => api('POST', withRedirect('/api/login/mfa'), body));
  if (result.ok) {
    window.location.assign(safePath(result.body && result.body.redirectUrl));
    return;
  }
  mfaForm.elements.code.value = '';
  // A spent or expired challenge cannot be retried: back to the password.
  if (result.status === 401 && messageOf(result).startsWith('The sign-in challenge')) {
    challenge = null;
    mfaForm.hidden = true;
    form.hidden = false;
    setAlert(alertBox, messageOf(result));
    form.elements.password.focus();
    return;
  }
  setAlert(mfaAlert, retryMessage(result));
  mfaForm.elements.code.focus();
});

/** Hides the password form when the local provider is disabled, says when LDAP accounts may use it, and lists the others. */
async function showProviders() {
  const result = await api('GET', '/api/login/providers');
  // Without the list the form stays: the server still decides at POST /api/login.
  if (!result.ok || !Array.isArray(result.body)) return;
  const local = result.body.find((p) => p.id === 'local');
  if (local && local.enabled === false) {
    form.hidden = true;
    document.getElementById('local-disabled').hidden = false;
  }
  // LDAP accounts sign in with the form itself, so LDAP is a note on the form, not a button.
  if (local?.enabled !== false && result.body.some((p) => p.id === 'ldap' && p.enabled)) document.getElementById('ldap-note').hidden = false;
  const others = result.body.filter((p) => !['local', 'ldap'].includes(p.id) && p.enabled && typeof p.url === 'string' && p.url.startsWith('/'));
  if (others.length === 0) return;
  const list = document.querySelector('#providers ul');
  // The provider's login keeps this page's ?redirect (the API checks it) for after the round trip.
  const redirect = new URLSearchParams(window.location.search).get('redirect');
  for (const provider of others) {
    const link = document.createElement('a');
    link.className = 'button secondary';
    link.href = redirect ? `${provider.url}?${new URLSearchParams({ redirect })}` : provider.url;
    link.textContent = `Sign in with ${provider.name}`;
    const item = document.createElement('li');
    item.append(link);
    list.append(item);
  }
  document.getElementById('providers').hidden = false;
}

/** A provider login that failed comes back as /login?error=<message>: shown as text, like any error. */
const loginError = new URLSearchParams(window.location.search).get('error');
if (loginError) setAlert(alertBox, loginError.slice(0, 300));

showProviders();

// The login page: posts {user, password} to /api/login and follows the redirectUrl it returns.
import { api, busy, checkForm, messageOf, setAlert } from '/assets/api.js';

const form = document.getElementById('login-form');
const alertBox = document.getElementById('login-alert');

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
  // A ?redirect=/path on this page is handed to the API, which checks it and answers redirectUrl.
  const redirect = new URLSearchParams(window.location.search).get('redirect');
  const path = redirect ? `/api/login?${new URLSearchParams({ redirect })}` : '/api/login';
  const result = await busy(form, () => api('POST', path, body));
  if (result.ok) {
    window.location.assign(safePath(result.body && result.body.redirectUrl));
    return;
  }
  let message = messageOf(result);
  const retryAfter = Number.parseInt(result.headers.get('retry-after') ?? '', 10);
  // The wait is shown unless the message already states it.
  if (result.status === 429 && retryAfter > 0 && !message.includes(String(retryAfter))) {
    message += ` Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
  }
  setAlert(alertBox, message);
  form.elements.password.value = '';
  form.elements.password.focus();
});

/** Hides the password form when the local provider is disabled, and lists the others. */
async function showProviders() {
  const result = await api('GET', '/api/login/providers');
  // Without the list the form stays: the server still decides at POST /api/login.
  if (!result.ok || !Array.isArray(result.body)) return;
  const local = result.body.find((p) => p.id === 'local');
  if (local && local.enabled === false) {
    form.hidden = true;
    document.getElementById('local-disabled').hidden = false;
  }
  const others = result.body.filter((p) => p.id !== 'local' && p.enabled && typeof p.url === 'string' && p.url.startsWith('/'));
  if (others.length === 0) return;
  const list = document.querySelector('#providers ul');
  // The provider's login keeps this page's ?redirect=/path (the server checks it again).
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

showProviders();

// The home page: shows who is signed in and signs them out.
import { api, busy, messageOf, setAlert } from '/assets/api.js';

const $ = (id) => document.getElementById(id);
const alertBox = $('home-alert');

function describeAccess(user) {
  const parts = [];
  if (user.isSvcAdmin) parts.push('Server administrator');
  for (const org of user.orgs ?? []) parts.push(`${org.role} of ${org.name}`);
  return parts.join('; ') || 'No organization yet';
}

async function showUser() {
  const result = await api('GET', '/api/user');
  $('home-loading').hidden = true;
  if (result.status === 401) {
    window.location.replace('/login');
    return;
  }
  if (!result.ok) {
    setAlert(alertBox, messageOf(result));
    return;
  }
  const user = result.body;
  $('home-title').textContent = `Welcome, ${user.name || user.login}`;
  const profile = $('home-profile');
  profile.querySelector('[data-field="name"]').textContent = user.name;
  profile.querySelector('[data-field="login"]').textContent = user.login;
  profile.querySelector('[data-field="email"]').textContent = user.email || '—';
  profile.querySelector('[data-field="access"]').textContent = describeAccess(user);
  profile.hidden = false;
  $('home-admin').hidden = !user.isSvcAdmin;
}

const signOut = $('sign-out');
signOut.addEventListener('click', async () => {
  setAlert(alertBox, '');
  const result = await busy(signOut.parentElement, () => api('POST', '/api/logout'));
  // 401: the session had already ended, which is what signing out wants anyway.
  if (result.ok || result.status === 401) {
    window.location.assign('/login');
    return;
  }
  setAlert(alertBox, messageOf(result));
});

showUser();

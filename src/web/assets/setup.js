// The setup wizard: administrator -> platform settings -> finish -> done. The server keeps the
// state (GET /api/setup/config), so a reload resumes at the right step.
import { api, busy, checkForm, messageOf, setAlert } from '/assets/api.js';

const $ = (id) => document.getElementById(id);
const ORDER = ['admin', 'settings', 'finish', 'done'];

/** Shows one step, marks the progress list, and moves focus to the step's heading. */
function show(step, { focus = true } = {}) {
  for (const section of document.querySelectorAll('section[data-step]')) section.hidden = section.dataset.step !== step;
  const current = ORDER.indexOf(step);
  for (const item of document.querySelectorAll('.steps li')) {
    const index = ORDER.indexOf(item.dataset.step);
    item.classList.toggle('done', index < current);
    if (index === current) item.setAttribute('aria-current', 'step');
    else item.removeAttribute('aria-current');
  }
  // Screen reader and keyboard users land on the new step instead of the button they pressed.
  if (focus) $(`${step}-title`).focus();
}

/** Fills the settings form with what is stored; the API key is never returned, only whether one is set. */
function prefill(settings) {
  const form = $('settings-form');
  for (const [section, values] of Object.entries(settings ?? {})) {
    for (const [field, value] of Object.entries(values ?? {})) {
      const input = form.elements.namedItem(`${section}.${field}`);
      if (input && typeof value === 'string') input.value = value;
    }
  }
  if (settings?.llm?.apiKeySet) $('llm-api-key').placeholder = 'A key is stored; leave empty to keep it';
}

/** Only the filled fields, grouped by section: an empty section is not sent at all. */
function settingsBody(form) {
  const body = {};
  for (const input of form.querySelectorAll('input[name]')) {
    const value = input.value.trim();
    if (!value) continue;
    const [section, field] = input.name.split('.');
    (body[section] ??= {})[field] = value;
  }
  return body;
}

$('admin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const alertBox = $('admin-alert');
  setAlert(alertBox, '');
  if (!checkForm(form, alertBox)) return;
  const body = {
    name: form.elements.name.value.trim(),
    email: form.elements.email.value.trim(),
    password: form.elements.password.value,
  };
  const login = form.elements.login.value.trim();
  if (login) body.login = login;
  const result = await busy(form, () => api('POST', '/api/setup/admin', body));
  if (!result.ok) {
    setAlert(alertBox, messageOf(result));
    return;
  }
  form.reset();
  show('settings');
});

$('settings-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const alertBox = $('settings-alert');
  setAlert(alertBox, '');
  if (!checkForm(form, alertBox)) return;
  const body = settingsBody(form);
  if (body.llm && !body.llm.provider) {
    setAlert(alertBox, 'Provider is required when any LLM field is filled.');
    $('llm-provider').focus();
    return;
  }
  const result = await busy(form, () => api('POST', '/api/setup/config', body));
  if (!result.ok) {
    setAlert(alertBox, messageOf(result));
    return;
  }
  $('llm-api-key').value = '';
  prefill(result.body.settings);
  show('finish');
});

$('finish-back').addEventListener('click', () => show('settings'));

$('finish-button').addEventListener('click', async () => {
  const alertBox = $('finish-alert');
  setAlert(alertBox, '');
  const result = await busy($('finish-button').parentElement, () => api('POST', '/api/setup/complete'));
  if (!result.ok) {
    setAlert(alertBox, messageOf(result));
    return;
  }
  show('done');
});

async function start() {
  const result = await api('GET', '/api/setup/config');
  $('setup-loading').hidden = true;
  if (!result.ok) {
    setAlert($('setup-alert'), messageOf(result));
    return;
  }
  const state = result.body;
  prefill(state.settings);
  if (!state.adminExists) {
    show('admin', { focus: false });
    return;
  }
  // The first admin exists: the administrator step is skipped, and changing settings now
  // needs a server admin's session (the API refuses otherwise, and says so inline).
  const me = await api('GET', '/api/user');
  const note = $('settings-note');
  if (me.ok && me.body.isSvcAdmin) {
    note.textContent = state.complete
      ? `Setup is already complete. You are signed in as ${me.body.login} and can still change these settings.`
      : `The administrator exists. You are signed in as ${me.body.login}.`;
  } else {
    note.textContent = 'The administrator already exists. Only a server administrator can change these settings: ';
    const link = document.createElement('a');
    link.href = '/login';
    link.textContent = 'sign in';
    note.append(link, '.');
  }
  note.hidden = false;
  show('settings', { focus: false });
}

start();

import { publicApi, session, takeFlash } from '../api.js';
import { field, h, replace, statusLine, submitWith } from '../dom.js';

/** Sign-in with email and password (POST /api/auth/login); shows "session expired" after a 401. */
export function signInPage(root: HTMLElement): void {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const status = statusLine();
  const flash = takeFlash();
  if (flash) status.error(flash);
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'center-card',
      onsubmit: submitWith(status, async () => {
        const { token } = await publicApi<{ token: string }>('POST', '/api/auth/login', { email: email.value, password: password.value });
        session.set(token);
        location.hash = '#/';
      }, submit),
    },
    h('h1', { tabindex: '-1' }, 'Sign in to Sightline'),
    field('Email', email),
    field('Password', password),
    submit,
    status.el,
  );
  replace(root, form);
  email.focus();
}

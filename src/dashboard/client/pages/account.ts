import { api, session } from '../api.js';
import { confirmDialog, copyText, field, h, replace, statusLine, submitWith } from '../dom.js';
import { fmtDate } from '../format.js';
import { empty } from '../widgets.js';

interface Profile { email: string; name: string }
interface Key { id: string; name: string; scope: 'read' | 'write'; prefix: string; last4: string; createdAt: string; lastUsedAt: string | null }

function profileForm(profile: Profile): HTMLElement {
  const name = h('input', { type: 'text', value: profile.name, autocomplete: 'name', maxlength: '80' });
  const email = h('input', { type: 'email', value: profile.email, autocomplete: 'email', required: true });
  const password = h('input', { type: 'password', autocomplete: 'new-password', minlength: '8' });
  const current = h('input', { type: 'password', autocomplete: 'current-password' });
  const status = statusLine();
  return h(
    'form',
    {
      class: 'panel',
      onsubmit: submitWith(status, async () => {
        const body: Record<string, string> = { name: name.value };
        if (email.value !== profile.email) body.email = email.value;
        if (password.value) body.password = password.value;
        if (current.value) body.currentPassword = current.value;
        const saved = await api<Profile>('PATCH', '/api/account/profile', body);
        profile.email = saved.email;
        // A new password signs out every other session of the account (this one stays).
        status.ok(body.password ? 'Profile saved. Your other sessions were signed out.' : 'Profile saved.');
        password.value = '';
        current.value = '';
      }),
    },
    h('h2', null, 'Profile'),
    field('Name', name),
    field('Email', email),
    field('New password', password, 'Leave empty to keep your password.'),
    field('Current password', current, 'Needed to change your email or password.'),
    h('button', { type: 'submit' }, 'Save profile'),
    status.el,
  );
}

function keysPanel(): HTMLElement {
  const list = h('div', null, h('p', { class: 'loading' }, 'Loading keys…'));
  const reveal = h('div', { 'aria-live': 'polite' });
  const status = statusLine();
  const load = async () => {
    try {
      const { keys } = await api<{ keys: Key[] }>('GET', '/api/account/keys');
      replace(list, keys.length === 0 ? empty('No API keys yet.') : keyTable(keys));
    } catch (err) {
      replace(list, h('p', { class: 'error-box', role: 'alert' }, (err as Error).message));
    }
  };
  const keyTable = (keys: Key[]) =>
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'keys' },
        h('caption', { class: 'sr-only' }, 'Your API keys'),
        h('thead', null, h('tr', null, ['Name', 'Key', 'Scope', 'Created', 'Last used', ''].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          null,
          keys.map((k) =>
            h(
              'tr',
              null,
              h('td', null, k.name || '—'),
              h('td', null, h('code', null, `${k.prefix}…${k.last4}`)),
              h('td', null, k.scope === 'write' ? 'Read & write' : 'Read only'),
              h('td', null, fmtDate(k.createdAt)),
              h('td', null, fmtDate(k.lastUsedAt)),
              h('td', null, h('button', {
                type: 'button',
                class: 'danger small',
                'aria-label': `Delete key ${k.name || k.last4}`,
                onclick: async () => {
                  const ok = await confirmDialog({ title: 'Delete API key?', message: `Anything using ${k.prefix}…${k.last4} stops working at once.`, confirmLabel: 'Delete key' });
                  if (!ok) return;
                  try {
                    await api('DELETE', '/api/account/keys', { id: k.id });
                    status.ok('Key deleted.');
                    await load();
                  } catch (err) {
                    status.error((err as Error).message);
                  }
                },
              }, 'Delete')),
            ),
          ),
        ),
      ),
    );
  const keyName = h('input', { type: 'text', maxlength: '80', placeholder: 'e.g. Reporting server' });
  const scope = h('select', null, h('option', { value: 'read' }, 'Read only'), h('option', { value: 'write' }, 'Read & write'));
  const form = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: submitWith(status, async () => {
        const created = await api<Key & { key: string }>('POST', '/api/account/keys', { name: keyName.value || undefined, scope: scope.value });
        const copy = h('button', { type: 'button', class: 'secondary', onclick: () => copyText(created.key, copy) }, 'Copy');
        replace(reveal, h('div', { class: 'key-reveal', role: 'alert' }, h('p', null, h('strong', null, 'Your new key. '), 'Copy it now: it will not be shown again.'), h('div', { class: 'copy-row' }, h('code', { class: 'secret' }, created.key), copy)));
        keyName.value = '';
        await load();
      }),
    },
    field('Key name', keyName),
    field('Scope', scope),
    h('button', { type: 'submit' }, 'Create key'),
  );
  void load();
  return h('section', { class: 'panel' }, h('h2', null, 'API keys'), h('p', { class: 'muted' }, 'Keys let servers read reports and manage projects. Keep them server-side.'), form, reveal, status.el, list);
}

function dangerZone(profile: Profile): HTMLElement {
  const status = statusLine();
  // The password again: a session left open on a shared computer is not enough to delete everything.
  const password = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'danger' }, 'Delete account…');
  return h(
    'form',
    {
      class: 'panel danger-zone',
      onsubmit: submitWith(status, async () => {
        const ok = await confirmDialog({ title: 'Delete your account?', message: 'Every project you own and its analytics data are removed for good.', confirmLabel: 'Delete account', typed: profile.email });
        if (!ok) return;
        await api('DELETE', '/api/account', { confirm: true, password: password.value });
        session.clear();
        location.hash = '#/signin';
      }, submit),
    },
    h('h2', null, 'Delete account'),
    h('p', null, 'Deletes your account, keys, sessions, connected apps and every project you own with all its data. This cannot be undone.'),
    field('Your password', password, 'Needed to delete the account.'),
    submit,
    status.el,
  );
}

/** Account: profile, API keys (created and shown once here), account deletion. */
export async function accountPage(root: HTMLElement): Promise<void> {
  replace(root, h('h1', { tabindex: '-1' }, 'Account'), h('p', { class: 'loading' }, 'Loading…'));
  const profile = await api<Profile>('GET', '/api/account/profile');
  replace(root, h('h1', { tabindex: '-1' }, 'Account'), profileForm(profile), keysPanel(), dangerZone(profile));
}

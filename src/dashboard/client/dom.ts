/** Tiny DOM helpers: the dashboard builds its pages with these instead of a framework. */

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, unknown>;

/** Appends children, flattening arrays and skipping null/false. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, ...child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * Creates an element. `on*` function attributes become listeners, `true` booleans bare
 * attributes, `value`/`checked` are set as properties; other values as attributes.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function' && name.startsWith('on')) el.addEventListener(name.slice(2), value as EventListener);
    else if (name === 'value' || name === 'checked') (el as unknown as Record<string, unknown>)[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, ...children);
  return el;
}

/** Replaces the element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

let ids = 0;
/** A unique element id, for label/aria links. */
export const uid = (prefix = 'f') => `${prefix}-${++ids}`;

/** A labelled form field: label above the control, optional hint tied by aria-describedby. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid();
  control.id = id;
  const hintEl = hint ? h('small', { id: `${id}-hint`, class: 'hint' }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/**
 * A form's submit handler: clears the status line, runs `action`, and shows its error there.
 * `busy`, when given, is disabled while the action runs (no double submits).
 */
export function submitWith(status: ReturnType<typeof statusLine>, action: () => Promise<void>, busy?: HTMLButtonElement): (e: Event) => Promise<void> {
  return async (e) => {
    e.preventDefault();
    status.clear();
    if (busy) busy.disabled = true;
    try {
      await action();
    } catch (err) {
      status.error((err as Error).message);
    } finally {
      if (busy) busy.disabled = false;
    }
  };
}

/** A status line for forms: polite announcements of success or failure. */
export function statusLine(): { el: HTMLElement; ok(text: string): void; error(text: string): void; clear(): void } {
  const el = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  return {
    el,
    ok: (text) => { el.className = 'status ok'; el.textContent = text; },
    error: (text) => { el.className = 'status error'; el.textContent = text; },
    clear: () => { el.className = 'status'; el.textContent = ''; },
  };
}

/** Copies text to the clipboard, falling back to selecting it for the user. */
export async function copyText(text: string, button: HTMLButtonElement): Promise<void> {
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Select and copy manually';
  }
  setTimeout(() => (button.textContent = label), 2000);
}

/**
 * A modal confirmation. With `typed`, the confirm button stays disabled until the user types
 * that exact text (for deletions that cannot be undone). Resolves true when confirmed.
 */
export function confirmDialog(opts: { title: string; message: string; confirmLabel: string; typed?: string }): Promise<boolean> {
  return new Promise((resolve) => {
    const input = opts.typed ? h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' }) : null;
    const confirm = h('button', { type: 'submit', class: 'danger', disabled: !!opts.typed }, opts.confirmLabel);
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const titleId = uid('dlg');
    const dialog = h(
      'dialog',
      { class: 'modal', 'aria-labelledby': titleId },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: titleId }, opts.title),
        h('p', null, opts.message),
        input ? field(`Type ${opts.typed} to confirm`, input) : null,
        h('div', { class: 'actions' }, cancel, confirm),
      ),
    );
    let result = false;
    input?.addEventListener('input', () => (confirm.disabled = input.value.trim() !== opts.typed));
    confirm.addEventListener('click', () => (result = true));
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (input ?? cancel).focus();
  });
}

/** Hands `blob` to the browser as a download named `name`. */
export function saveFile(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Building the page from data without ever parsing data as HTML: every text goes in as a text node. */

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | boolean | undefined>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

let lastId = 0;
/** An id for a label's `for` or an `aria-labelledby`. */
export const freshId = (prefix: string) => `${prefix}-${++lastId}`;

/** A date and time in the reader's own zone and language, with the zone named. */
export function when(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(at);
}

/** Says something to everyone, screen readers included, for a few seconds. */
export function announce(text: string): void {
  const status = byId('status');
  status.textContent = text;
  window.setTimeout(() => {
    if (status.textContent === text) status.textContent = '';
  }, 6000);
}

/** A reason form: a labelled text box and a button; `act` gets the reason and answers what to say after. */
export function reasonForm(
  label: string,
  button: string,
  act: (reason: string) => Promise<string>,
  extra: Child = null,
): HTMLFormElement {
  const id = freshId('reason');
  const area = el('textarea', { id, name: 'reason', required: true, maxlength: '1000' });
  const error = el('p', { class: 'error', role: 'alert' });
  const submit = el('button', { type: 'submit', class: 'primary' }, button);
  const form = el(
    'form',
    { class: 'form' },
    el('label', { for: id }, label),
    area,
    extra,
    el('div', { class: 'actions' }, submit),
    error,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const reason = area.value.trim();
    if (reason === '') {
      error.textContent = 'Say why: it is recorded.';
      area.focus();
      return;
    }
    submit.disabled = true;
    error.textContent = '';
    act(reason)
      .then((done) => {
        form.replaceWith(el('p', { class: 'note', role: 'status' }, done));
      })
      .catch((err: Error) => {
        error.textContent = err.message;
        submit.disabled = false;
      });
  });
  return form;
}

/**
 * The page's elements, built with the DOM and never from HTML text: whatever the API returns
 * becomes text nodes, never markup. And the live region every view speaks through.
 */

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The page's element `#id`, as `kind` (an HTMLElement by default); a page without it is a bug. */
export function byId(id: string): HTMLElement;
export function byId<T extends HTMLElement>(id: string, kind: abstract new () => T): T;
export function byId(id: string, kind: abstract new () => HTMLElement = HTMLElement): HTMLElement {
  const found = document.getElementById(id);
  if (!(found instanceof kind)) throw new Error(`the page has no #${id}`);
  return found;
}

/** An element with attributes and children (strings become text, never markup). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** Text for assistive technology only: which thing a button acts on. */
export const hiddenText = (text: string) => el('span', { class: 'visually-hidden' }, text);

/** A date in the reader's locale and time zone, the exact ISO time in its title. */
export function time(iso: string | null | undefined, missing = '—'): Node {
  if (typeof iso !== 'string') return document.createTextNode(missing);
  const date = new Date(iso);
  return el(
    'time',
    { datetime: iso, title: iso },
    Number.isNaN(date.getTime()) ? iso : DATE_FORMAT.format(date),
  );
}

/** Says `message` in the live region; `kind` 'error' shows it as one. */
export function say(message: string, kind: 'info' | 'error' = 'info') {
  const status = byId('status');
  status.textContent = message;
  status.dataset.kind = kind;
}

/** The value of the button that submitted a form ('' without one). */
export function submitterValue(event: SubmitEvent): string {
  const { submitter } = event;
  return submitter instanceof HTMLButtonElement || submitter instanceof HTMLInputElement
    ? submitter.value
    : '';
}

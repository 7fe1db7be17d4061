/**
 * Small DOM builders every tab uses. Text always goes in as text
 * (`textContent`), so a user string (an app name, a job description, a
 * column name) can never become markup.
 */

export type Child = Node | string | null | undefined | false;

/** `<tag class=cls>children</tag>`; strings become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: { class?: string; title?: string; [name: string]: unknown } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (name === 'class') {
      el.className = String(value);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value as Record<string, string>);
    } else {
      el.setAttribute(name, String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    el.append(child);
  }
  return el;
}

/** A link to a page of the live Spark UI (opens in a new tab), or plain text without one. */
export function uiLink(
  base: string | null,
  path: string,
  text: string
): HTMLElement {
  if (!base) {
    return h('span', {}, text);
  }
  return h(
    'a',
    {
      href: `${base}${path}`,
      target: '_blank',
      rel: 'noopener noreferrer',
      title: 'Open in the Spark UI'
    },
    text
  );
}

/**
 * A stage's or job's call site as the views show it: "collect at cell line 11"
 * with the line's text on hover (where it points into the measured cell), else
 * Spark's own name.
 */
export function callSite(label: unknown, lineText: unknown): HTMLElement {
  const text = String(lineText ?? '');
  return h(
    'span',
    {
      class: 'jp-perf-wrap jp-perf-callsite',
      title: text ? `cell line: ${text}` : undefined
    },
    String(label ?? '')
  );
}

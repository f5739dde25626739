// HTML for every service's pages: a tagged template that escapes each interpolated value unless
// it is already Html (the result of another html`` or of trustedHtml), so a page cannot forget
// to escape a player name, a category name or a URL.

export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as it may stand in an element or a quoted attribute. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  // Nothing for an absent value, so `${condition && html`…`}` reads naturally.
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += render(values[i]) + strings[i + 1];
  return new Html(text);
}

/** Markup written in the code itself (a stylesheet, a script): never anything from a request. */
export const trustedHtml = (text: string): Html => new Html(text);

/** Text for an inline <script>: a JSON string that cannot close the script element. */
export const scriptValue = (value: string): Html => new Html(JSON.stringify(value).replace(/</g, '\\u003c'));

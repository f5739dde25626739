// Reading settings from the environment: one reader, one rule per kind of value, and every read
// declares its variable (name, default as a person reads it, meaning), so the reference
// (docs/configuration.md, written by `npm run config-docs`) is made from the reads themselves.
// Problems are collected, not thrown: loadConfig reports every one of them at once.

export type Env = Record<string, string | undefined>;

/** A kind of value, and the rule a set value must keep. */
export interface Kind<T> {
  /** As the problem says it after the name: `NAME must <rule> (got "…")`; empty when any text will do. */
  rule: string;
  /** The value a set text (trimmed, not empty) means; undefined when it breaks the rule. */
  parse(text: string): T | undefined;
  /** The default as the reference writes it (String(value) without). */
  show?(value: T): string;
  /** Never repeated in a problem: it may hold a password. */
  secret?: boolean;
}

/** What a read says about its variable: its meaning, with the default written out where the value would not say it (computed, or none). */
export type About = string | { default: string; meaning: string };

/** One variable as the reference shows it (Markdown). */
export interface Declared { name: string; default: string; rule: string; meaning: string }

export interface Section { title: string; variables: Declared[] }

export const text: Kind<string> = { rule: '', parse: (value) => value };

/** Plain decimal digits (Number() would also take "0x40", "1e2" and ""); a minus sign only where the range has negatives. */
export function integer(min: number, max: number): Kind<number> {
  const digits = min < 0 ? /^-?\d+$/ : /^\d+$/;
  return {
    rule: `be an integer from ${min} to ${max}`,
    parse: (value) => (digits.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : undefined),
  };
}

/** A quota of requests (a minute, an hour): at least one. */
export const quota = integer(1, 1_000_000);

export const flag: Kind<boolean> = {
  rule: 'be true or false',
  parse: (value) => {
    const word = value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(word)) return true;
    return ['0', 'false', 'no', 'off'].includes(word) ? false : undefined;
  },
};

/** One of a few words, in any case. */
export function oneOf<const T extends string>(allowed: readonly T[]): Kind<T> {
  return { rule: `be one of ${allowed.join(', ')}`, parse: (value) => allowed.find((word) => word === value.toLowerCase()) };
}

/** An absolute http(s) URL, without trailing slashes (paths are joined to it). */
export const httpUrl: Kind<string> = {
  rule: 'be an absolute http(s) URL',
  parse: (value) => {
    const url = value.replace(/\/+$/, '');
    return /^https?:$/.test(URL.parse(url)?.protocol ?? '') ? url : undefined;
  },
};

/** A server's connection URL: only the scheme is checked, and it is never repeated (it may hold a password). */
export function serverUrl(...schemes: string[]): Kind<string> {
  const prefixes = schemes.map((scheme) => `${scheme}://`);
  return { rule: `start with ${prefixes.join(' or ')}`, parse: (value) => (prefixes.some((p) => value.startsWith(p)) ? value : undefined), secret: true };
}

export function secret(minLength: number): Kind<string> {
  return { rule: `be at least ${minLength} characters`, parse: (value) => (value.length >= minLength ? value : undefined), secret: true };
}

/** Items between commas (or also spaces), blanks dropped; with `allowed`, only those words, in any case. */
export function list<const T extends string = string>(options: { spaces?: boolean; allowed?: readonly T[] } = {}): Kind<T[]> {
  const { spaces = false, allowed } = options;
  return {
    rule: allowed ? `be a comma list of ${allowed.join(', ')}` : '',
    parse: (value) => {
      const items = value.split(spaces ? /[\s,]+/ : ',').map((item) => item.trim()).filter(Boolean);
      if (!allowed) return items as T[];
      const words = items.map((item) => item.toLowerCase());
      return words.every((word) => (allowed as readonly string[]).includes(word)) ? words as T[] : undefined;
    },
    show: (items) => items.join(spaces ? ' ' : ','),
  };
}

/**
 * The environment read through kinds: `section()` gives a reader whose variables the reference
 * lists under that title (in the order the sections were made, then in the order read).
 */
export class Settings {
  readonly problems: string[];
  private readonly sections: Section[];
  private readonly current: Section | undefined;
  private readonly env: Env;

  constructor(env: Env, shared?: { problems: string[]; sections: Section[] }, current?: Section) {
    this.env = env;
    this.problems = shared?.problems ?? [];
    this.sections = shared?.sections ?? [];
    this.current = current;
  }

  section(title: string): Settings {
    let section = this.sections.find((s) => s.title === title);
    if (!section) this.sections.push(section = { title, variables: [] });
    return new Settings(this.env, { problems: this.problems, sections: this.sections }, section);
  }

  /** Every variable read so far, by section. */
  declared(): Section[] {
    return this.sections;
  }

  /** The value of `name`, or `fallback` when it is unset, empty, or breaks the kind's rule (a problem). */
  read<T>(name: string, fallback: T, kind: Kind<T>, about: About): T {
    this.record(name, typeof about === 'string' ? `\`${kind.show?.(fallback) ?? String(fallback)}\`` : about.default, kind, about);
    const value = this.value(name, kind);
    return value === undefined ? fallback : value;
  }

  /** The value of `name`, or null when it is unset (or breaks the rule: a problem). */
  optional<T>(name: string, kind: Kind<T>, about: About): T | null {
    this.record(name, typeof about === 'string' ? 'none' : about.default, kind, about);
    return this.value(name, kind) ?? null;
  }

  /** Whether `name` is set at all, valid or not (for rules between variables). */
  given(name: string): boolean {
    return !!this.env[name]?.trim();
  }

  /** A rule between variables that the set values break. */
  problem(message: string): void {
    this.problems.push(message);
  }

  private value<T>(name: string, kind: Kind<T>): T | undefined {
    const raw = this.env[name]?.trim();
    if (!raw) return undefined;
    const value = kind.parse(raw);
    if (value === undefined) this.problems.push(`${name} must ${kind.rule}${kind.secret ? '' : ` (got "${raw}")`}`);
    return value;
  }

  private record(name: string, shown: string, kind: Kind<unknown>, about: About): void {
    if (!this.current) throw new Error(`${name} is read outside a section`);
    // One variable, one declaration: a second read would be a second, perhaps different, meaning.
    if (this.sections.some((s) => s.variables.some((v) => v.name === name))) throw new Error(`${name} is read twice`);
    this.current.variables.push({ name, default: shown, rule: kind.rule, meaning: typeof about === 'string' ? about : about.meaning });
  }
}

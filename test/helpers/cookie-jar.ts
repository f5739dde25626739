// A browser's cookie jar over fetch for the OAuth tests: one jar for every host (cookies do not
// tell ports apart either), no redirect followed by itself, the parsed JSON when there is some.

export interface JarResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  location: string | null;
}

export class CookieJar {
  readonly cookies = new Map<string, string>();
  readonly setCookies: string[] = [];

  async go(url: string, init: RequestInit = {}): Promise<JarResponse> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const json = (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, text, json, location: response.headers.get('location') };
  }

  /** Follows redirects (relative ones against the last address) up to the first address `stop` picks, unfetched. */
  async follow(url: string, stop: (url: URL) => boolean): Promise<URL> {
    let current = new URL(url);
    for (let hops = 0; hops < 20; hops++) {
      if (stop(current)) return current;
      const { location, status } = await this.go(current.href);
      if (!location) throw new Error(`${current} answered ${status} without reaching the expected address`);
      current = new URL(location, current);
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** A POST of a JSON body. */
  postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JarResponse> {
    return this.go(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  }

  /** The whole login through an auto-approving fake provider: /oauth/external, the provider, our callback. */
  async login(base: string): Promise<JarResponse> {
    const start = await this.go(`${base}/oauth/external`);
    const provider = await this.go(start.location!);
    return this.go(`${base}/oauth/external/callback${new URL(provider.location!).search}`);
  }
}

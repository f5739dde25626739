// What every route of the fake can see.
import type { Route, RouteContext } from './http.ts';
import type { OAuthProvider } from './oauth.ts';
import type { PlayerCatalogue } from './players.ts';

/** Knobs that change what a route answers (a hostile upstream); set through `control()`. */
export interface AnswerKnobs {
  /** GeyserMC's XUID -> gamertag lookup answers this for every XUID it knows; null: the real gamertag. */
  bedrockGamertag: string | null;
  /** The external metadata's `skinDomains`; null: the fake's own host name (`127.0.0.1`). */
  skinDomains: string[] | null;
  /**
   * The host the external profiles write their texture URLs with (as given: `2130706433`,
   * `[::1]`, `localhost`), on the fake's port; null: the fake's own host.
   */
  externalTextureHost: string | null;
}

export interface FakeState {
  baseUrl: string;
  players: PlayerCatalogue;
  oauth: OAuthProvider;
  answers: AnswerKnobs;
}

/** The base URL external texture URLs are written on: the fake's own, or its port under `externalTextureHost`. */
export function externalTextureBaseUrl(state: FakeState): string {
  const host = state.answers.externalTextureHost;
  if (host === null) return state.baseUrl;
  // Written by hand: URL would normalise 2130706433 to 127.0.0.1.
  return `http://${host}:${new URL(state.baseUrl).port}`;
}

export type FakeRoute = Route<FakeState>;
export type FakeContext = RouteContext<FakeState>;

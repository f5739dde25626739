// What every route of the fake can see.
import type { Route, RouteContext } from './http.ts';
import type { OAuthProvider } from './oauth.ts';
import type { PlayerCatalogue } from './players.ts';

export interface FakeState {
  baseUrl: string;
  players: PlayerCatalogue;
  oauth: OAuthProvider;
}

export type FakeRoute = Route<FakeState>;
export type FakeContext = RouteContext<FakeState>;

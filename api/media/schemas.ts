// The component schemas of the media service's answers and bodies (api/docs/schemas.ts builds them).
import { array, bool, int, object, oneOfValues, str, uri } from '../docs/schemas.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { ORIENTATION_FILTERS } from './orientation.ts';

export const MEDIA_SCHEMAS: Record<string, Schema> = {
  MediaItem: object({
    id: str(), alias: str(), category: str('display name'), file: str(), url: { ...uri, description: 'permanent address /f/<id>.<ext> (with ?token= for private files)' },
    type: oneOfValues(['image', 'video']), mime: str(), width: int(), height: int(),
    orientation: oneOfValues([...ORIENTATION_FILTERS, 'square']), bytes: int(), private: bool(),
  }),
  MediaCategories: object({
    categories: array(object({
      alias: str(), name: str(), private: bool(), files: int(), images: int(), videos: int(), landscape: int(), portrait: int(), square: int(),
    })),
    totals: object({ categories: int(), files: int(), calls: int('selector requests ever answered') }),
  }),
  MediaLogin: object({ password: str() }),
  MediaToken: object({ token: str('use as ?token= on private selectors and files'), expires_at: int('Unix seconds'), categories: array(str()) }),
  MediaHealth: object({ status: { const: 'ok' }, service: { const: 'media' }, version: str(), categories: int(), files: int() }),
};

// The component schemas of the media service's answers and bodies (api/docs/schemas.ts builds them).
import { array, bool, int, object, oneOfValues, ref, str, uri } from '../docs/schemas.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { ORIENTATION_FILTERS } from './orientation.ts';

/** What orientation=auto judged (present with it only). */
const JUDGED = {
  orientation_chosen: oneOfValues(ORIENTATION_FILTERS, 'orientation=auto: the orientation judged for this client'),
  orientation_fallback: bool('orientation=auto: true when no file had that orientation and any file was taken'),
};

export const MEDIA_SCHEMAS: Record<string, Schema> = {
  MediaItem: object({
    id: str(), alias: str(), category: str('display name'), file: str(), url: { ...uri, description: 'permanent address /f/<id>.<ext> (with ?token= for private files)' },
    type: oneOfValues(['image', 'video']), mime: str(), width: int(), height: int(),
    orientation: oneOfValues([...ORIENTATION_FILTERS, 'square']), bytes: int(), private: bool(), ...JUDGED,
  }, Object.keys(JUDGED)),
  MediaItems: object({ files: array(ref('MediaItem'), { description: 'count= distinct files, fewer when fewer match' }), ...JUDGED }, Object.keys(JUDGED)),
  MediaCategories: object({
    categories: array(object({
      alias: str(), name: str(), private: bool(), files: int(), images: int(), videos: int(), landscape: int(), portrait: int(), square: int(),
    })),
    totals: object({ categories: int(), files: int(), calls: int('selector requests ever answered') }),
  }),
  MediaFilePage: object({
    alias: str(), category: str('display name'), private: bool(),
    page: int(), limit: int(), total: int('readable files in the category now'), pages: int('pages of `limit` files now'),
    files: array(ref('MediaItem'), { description: 'oldest in the index first; a file added later comes after every file listed before' }),
  }),
  MediaLogin: object({ password: str() }),
  MediaToken: object({ token: str('use as ?token= on private selectors and files'), expires_at: int('Unix seconds'), categories: array(str()) }),
  MediaHealth: object({ status: { const: 'ok' }, service: { const: 'media' }, version: str(), categories: int(), files: int() }),
};

// @ts-check
// The page's entry: the scene's API, as the page extension shapes it, becomes window.skinfarm;
// then the page is ready. An error while the scene loads leaves it unready (index.html keeps the
// error in window.sceneError).
import { api } from './scene.js';
import extend from './extension.js';

window.skinfarm = extend(api);
window.sceneReady = true;

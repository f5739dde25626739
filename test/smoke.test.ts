import test from 'ava';
import { defaultSkinFor } from '../shared/default-skin.ts';

test('default skin follows the modern client table', (t) => {
  t.deepEqual(defaultSkinFor('069a79f444e94726a5befca90e38aaf5'), { name: 'alex', slim: true });
});

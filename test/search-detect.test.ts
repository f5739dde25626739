import test from 'ava';
import { ApiError } from '../shared/errors.ts';
import { detect, parseQuery } from '../api/search/detect.ts';
import { typedValues } from '../api/search/index/fields.ts';
import { normalise } from '../api/search/normalise.ts';
import type { SearchType } from '../api/search/types.ts';

// [input, expected type under auto, expected normalised value]
const AUTO: Array<[string, SearchType, string]> = [
  ['+1 202-555-0143', 'phone', '+12025550143'],
  ['(202) 555-0142', 'phone', '+12025550142'],
  ['+44 20 7946 0958', 'phone', '+442079460958'],
  ['Ada.Example@Example.ORG', 'email', 'ada.example@example.org'],
  ['user+tag@mail.example.net', 'email', 'user+tag@mail.example.net'],
  ['@Ada_Example', 'messenger_user', '@ada_example'],
  ['Ada_Example', 'network_user', 'ada_example'],
  ['069a79f4-44e9-4726-a5be-fca90e38aaf5', 'network_user', '069a79f444e94726a5befca90e38aaf5'],
  ['100200300', 'social_id', '100200300'],
  ['000000000000', 'social_id', '000000000000'],
  ['Ada Example', 'fio', 'Ada Example'],
  ['ada maria example', 'fio', 'Ada Maria Example'],
  ['Иван Петров-Водкин', 'fio', 'Иван Петров-Водкин'],
  ['192.0.2.10', 'ip', '192.0.2.10'],
  ['2001:DB8:0:0::1', 'ip', '2001:db8::1'],
  ['::ffff:198.51.100.7', 'ip', '198.51.100.7'],
  ['Mail.Example.org.', 'domain', 'mail.example.org'],
  ['https://www.example.co.uk/path?q=1', 'domain', 'www.example.co.uk'],
  ['00:00:5E:00:53:01', 'mac', '00:00:5e:00:53:01'],
  ['00-00-5e-00-53-01', 'mac', '00:00:5e:00:53:01'],
  ['0000.5e00.5301', 'mac', '00:00:5e:00:53:01'],
  ['00005e0053ab', 'mac', '00:00:5e:00:53:ab'],
];

for (const [input, type, value] of AUTO) {
  test(`auto: ${input} is ${type}`, (t) => {
    t.deepEqual(detect(input), { type, value });
    t.deepEqual(parseQuery(input, undefined), { type, value });
  });
}

const UNDETECTABLE = ['', '   ', '+12345', 'Ada Иван', 'one two three four', 'ada@localhost', 'a@b@example.org', 'hello world!'];
for (const input of UNDETECTABLE) {
  test(`auto: ${JSON.stringify(input)} is refused`, (t) => {
    t.is(detect(input), null);
    const error = t.throws(() => parseQuery(input, 'auto'), { instanceOf: ApiError });
    t.is(error.code, 'invalid_query');
  });
}

// [type, accepted input, normalised] and inputs that cannot be that type.
const EXPLICIT: Array<[SearchType, Array<[string, string]>, string[]]> = [
  ['phone', [['2025550143', '+12025550143'], ['+7 495 555-01-23', '+74955550123']], ['12345', '+1 555 0100', 'ada@example.org', '192.0.2.1']],
  ['email', [['ADA@EXAMPLE.NET', 'ada@example.net']], ['ada', 'ada@', '@example.org', 'a..b@example.org', 'ada@example', 'ada@192.0.2.1']],
  ['messenger_user', [['ada_example', '@ada_example'], ['@AdaX', '@adax']], ['@ab', '@ada-example', 'ada example', '@' + 'a'.repeat(33)]],
  ['network_user', [['Ada.Example-1', 'ada.example-1'], ['12345', '12345']], ['ada example', 'ada@example', '']],
  ['social_id', [['0012', '0012']], ['12a', '-5', '1'.repeat(21)]],
  ['fio', [['ADA EXAMPLE', 'Ada Example'], ["d'arcy o'neil", "D'Arcy O'Neil"]], ['Ada', 'Ada B C D', 'Ada 3', 'Adа Example' /* Cyrillic а inside */]],
  ['ip', [['203.0.113.255', '203.0.113.255'], ['fe80::1', 'fe80::1']], ['256.1.1.1', '01.2.3.4', '1.2.3', '::g', 'example.org']],
  ['domain', [['EXAMPLE.NET', 'example.net']], ['localhost', 'example', 'ex ample.org', '-bad.example.org', '192.0.2.1']],
  ['mac', [['000000000000', '00:00:00:00:00:00'], ['AA:BB:CC:DD:EE:FF', 'aa:bb:cc:dd:ee:ff']], ['00:00:5e:00:53', '00:00-5e:00:53:01', 'gg:00:5e:00:53:01']],
];

for (const [type, valid, invalid] of EXPLICIT) {
  test(`type=${type}: valid and invalid values`, (t) => {
    for (const [input, value] of valid) t.deepEqual(parseQuery(input, type), { type, value }, input);
    for (const input of invalid) {
      t.is(normalise(type, input), null, input);
      const error = t.throws(() => parseQuery(input, type), { instanceOf: ApiError }, input);
      t.is(error.code, 'invalid_query', input);
    }
  });
}

test('an unknown type is invalid_type, checked before the query; an empty type means auto', (t) => {
  for (const type of ['username', 'PHONE', 3]) {
    const error = t.throws(() => parseQuery('', type), { instanceOf: ApiError });
    t.is(error.code, 'invalid_type', String(type));
  }
  t.deepEqual(parseQuery('192.0.2.1', ''), { type: 'ip', value: '192.0.2.1' });
});

test('index fields: the field name picks weak types, shape alone picks strong ones', (t) => {
  const values = typedValues({
    full_name: 'ada example',
    contact: { phones: ['+1 202 555 0101', '(202) 555-0102'], mail: 'Ada@Example.org' },
    login: 'AdaX',
    uid: 4242,
    city: 'Northvale',
    note: '198.51.100.20',
    phone: 'ada@example.net',
    id: 'person-1',
  });
  t.deepEqual(values.map((v) => `${v.type}:${v.value}`).sort(), [
    'email:ada@example.net',
    'email:ada@example.org',
    'fio:Ada Example',
    'ip:198.51.100.20',
    'network_user:adax',
    'phone:+12025550101',
    'phone:+12025550102',
    'social_id:4242',
  ]);
});

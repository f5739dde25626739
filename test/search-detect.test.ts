import test from 'ava';
import { ApiError } from '../shared/errors.ts';
import { assumedRegion, detect, parseQuery } from '../api/search/detect.ts';
import { typedValues } from '../api/search/index/fields.ts';
import { normalise } from '../api/search/normalise.ts';
import { typedKey, type SearchType } from '../api/search/types.ts';
import { parseRegion } from '../api/search/values/phone.ts';

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

// Issue #15 item 4: each detection gap and what was decided (docs/search.md has the same table).
// [input, type parameter, expected type (null = refused), expected value]
const DECISIONS: Array<[string, string, SearchType | null, string | null]> = [
  // e-mail
  ['"ada example"@example.org', 'auto', 'email', '"ada example"@example.org'],
  ['"ada"@example.org', 'auto', 'email', 'ada@example.org'],
  ['ada@[192.0.2.1]', 'auto', 'email', 'ada@[192.0.2.1]'],
  ['ada@[IPv6:2001:DB8::1]', 'auto', 'email', 'ada@[IPv6:2001:db8::1]'],
  ['ada@[2001:db8::1]', 'auto', null, null],
  ['mailto:Ada@Example.org?subject=Hi', 'auto', 'email', 'ada@example.org'],
  ['Ada Example <Ada@Example.org>', 'auto', 'email', 'ada@example.org'],
  ['foo@bar.com.', 'auto', null, null],
  ['foo@bar.com.', 'email', null, null],
  // IP
  ['[2001:db8::1]', 'auto', 'ip', '2001:db8::1'],
  ['[2001:db8::1]:8080', 'auto', 'ip', '2001:db8::1'],
  ['192.0.2.1:8080', 'auto', 'ip', '192.0.2.1'],
  ['::192.0.2.1', 'auto', 'ip', '::c000:201'],
  ['0:0:0:0:0:0:192.0.2.1', 'auto', 'ip', '::c000:201'],
  ['fe80::1%eth0.100', 'auto', 'ip', 'fe80::1'],
  ['ff02::5678%pvc1.3', 'ip', 'ip', 'ff02::5678'],
  ['256.0.0.0', 'auto', null, null],
  ['1.2.3', 'auto', null, null],
  // MAC and EUI-64
  ['00 00 5e 00 53 ab', 'auto', 'mac', '00:00:5e:00:53:ab'],
  ['0:0:5e:0:53:1', 'auto', 'mac', '00:00:5e:00:53:01'],
  ['00:00:5e:ef:10:00:00:01', 'auto', 'mac', '00:00:5e:ef:10:00:00:01'],
  ['00-00-5E-EF-10-00-00-01', 'auto', 'mac', '00:00:5e:ef:10:00:00:01'],
  ['00005eef10000001', 'mac', 'mac', '00:00:5e:ef:10:00:00:01'],
  ['00:00:5e:ef:10:00:00:01', 'ip', 'ip', '::5e:ef:10:0:0:1'],
  // links
  ['https://t.me/durov', 'auto', 'messenger_user', '@durov'],
  ['t.me/durov', 'messenger_user', 'messenger_user', '@durov'],
  ['https://t.me/durov', 'domain', 'domain', 't.me'],
  ['https://example.org/durov', 'auto', 'domain', 'example.org'],
  // full names
  ['Иванов И. И.', 'auto', 'fio', 'Иванов И. И.'],
  ['иванов и.и.', 'fio', 'fio', 'Иванов И. И.'],
  ['María de los Ángeles Pérez', 'auto', 'fio', 'María de los Ángeles Pérez'],
  ['MARÍA DE LOS ÁNGELES PÉREZ', 'fio', 'fio', 'María de los Ángeles Pérez'],
  ['王小明', 'auto', 'fio', '王小明'],
  ['Γιώργος Παπαδόπουλος', 'auto', 'fio', 'Γιώργος Παπαδόπουλος'],
  ['Ronald McDonald', 'auto', 'fio', 'Ronald McDonald'],
  ['RONALD MCDONALD', 'fio', 'fio', 'Ronald Mcdonald'],
  ['one two three four', 'fio', null, null],
  ['de la', 'fio', null, null],
  ['Γιώργος Ivanov', 'fio', null, null],
  // phones
  ['tel:+1-202-555-0143;ext=12', 'auto', 'phone', '+12025550143'],
  ['+1 202–555–0143', 'auto', 'phone', '+12025550143'],
  ['+1 202 555 0143 ext. 7', 'auto', 'phone', '+12025550143'],
  ['(202) 555-0143 x7', 'auto', 'phone', '+12025550143'],
  ['0044 20 7946 0958', 'auto', 'phone', '+442079460958'],
  ['00442079460958', 'auto', 'phone', '+442079460958'],
];

for (const [input, type, expectedType, value] of DECISIONS) {
  test(`decision: ${input} as ${type} is ${expectedType ?? 'refused'}`, (t) => {
    if (expectedType === null) {
      const error = t.throws(() => parseQuery(input, type), { instanceOf: ApiError });
      t.is(error.code, 'invalid_query');
    } else {
      t.deepEqual(parseQuery(input, type), { type: expectedType, value });
    }
  });
}

test('names match whatever their casing; the written casing is kept', (t) => {
  const written = parseQuery('Ronald McDonald', 'fio');
  const shouted = parseQuery('RONALD MCDONALD', 'fio');
  t.not(written.value, shouted.value);
  t.is(typedKey(written), typedKey(shouted));
});

test('phone numbers without a country code are read in the given region, and the answer says so', (t) => {
  const cn = parseQuery('131 2345 6789', 'auto', 'CN');
  t.deepEqual(cn, { type: 'phone', value: '+8613123456789' });
  t.is(assumedRegion('131 2345 6789', cn, 'CN'), 'CN');
  // The same digits in the default region (US) are a Chicago number: the region matters.
  t.deepEqual(parseQuery('131 2345 6789', 'phone'), { type: 'phone', value: '+13123456789' });
  const international = parseQuery('0086 131 2345 6789', 'auto', 'US');
  t.deepEqual(international, { type: 'phone', value: '+8613123456789' });
  t.is(assumedRegion('0086 131 2345 6789', international, 'US'), null);
  // The region's own international prefix (011 in the US) carries the country code too.
  t.is(assumedRegion('011 86 131 2345 6789', parseQuery('011 86 131 2345 6789', 'phone', 'US'), 'US'), null);
  t.is(assumedRegion('+8613123456789', parseQuery('+8613123456789', 'auto', 'CN'), 'CN'), null);
  t.deepEqual(parseQuery('8 (495) 555-01-23', 'phone', 'RU'), { type: 'phone', value: '+74955550123' });
  t.is(parseRegion('cn'), 'CN');
  for (const bad of ['XX', 'USA', 'C1', '']) t.is(parseRegion(bad), null, bad);
});

import test from 'ava';
import { analyseDomain } from '../api/search/sources/analysers/domain.ts';
import { analyseEmail } from '../api/search/sources/analysers/email.ts';
import { analyseIp } from '../api/search/sources/analysers/ip.ts';
import { analyseMac } from '../api/search/sources/analysers/mac.ts';
import { analysePhone } from '../api/search/sources/analysers/phone.ts';

test('ip: version, range and reverse name', (t) => {
  t.like(analyseIp('192.0.2.10'), { version: 4, range: 'documentation', private: false, reserved: true, global_unicast: false, reverse_pointer: '10.2.0.192.in-addr.arpa' });
  t.like(analyseIp('10.1.2.3'), { version: 4, range: 'private', private: true, reserved: false });
  t.like(analyseIp('2001:db8::1'), { version: 6, range: 'documentation', reserved: true });
  t.like(analyseIp('fe80::1'), { version: 6, range: 'linkLocal', private: true });
  t.like(analyseIp('8.8.8.8'), { range: 'unicast', global_unicast: true });
  t.true((analyseIp('2001:db8::1').reverse_pointer as string).startsWith('1.0.0.0.0.0.0.0'));
});

test('domain: registrable domain, suffix, subdomain', (t) => {
  t.like(analyseDomain('a.b.example.co.uk'), { registrable_domain: 'example.co.uk', suffix: 'co.uk', subdomain: 'a.b', suffix_kind: 'icann', labels: 5 });
  t.like(analyseDomain('example.org'), { registrable_domain: 'example.org', suffix: 'org', subdomain: null });
});

test('phone: country, type and formats', (t) => {
  t.like(analysePhone('+442079460958'), { country: 'GB', calling_code: '+44', number_type: 'fixed_line' });
  t.like(analysePhone('+12025550143'), { country: 'US', national_number: '2025550143' });
  t.deepEqual(analysePhone('+12025550143').formats, { international: '+1 202 555 0143', national: '(202) 555-0143', rfc3966: 'tel:+12025550143' });
});

test('mac: vendor from the IEEE registry, flag bits', (t) => {
  t.like(analyseMac('00:00:5e:00:53:01'), { vendor: 'ICANN, IANA Department', registry_block: 'MA-L', multicast: false, locally_administered: false });
  t.like(analyseMac('b8:27:eb:12:34:56'), { vendor: 'Raspberry Pi Foundation' });
  t.like(analyseMac('02:00:00:00:00:01'), { vendor: null, locally_administered: true });
  t.like(analyseMac('01:00:5e:00:00:fb'), { multicast: true });
});

test('email: parts and free-mail providers', (t) => {
  t.like(analyseEmail('ada+news@example.org'), { local_part: 'ada+news', domain: 'example.org', subaddress: 'news', free_mail: false, provider: null });
  t.like(analyseEmail('someone@gmail.com'), { free_mail: true, provider: 'Gmail' });
});

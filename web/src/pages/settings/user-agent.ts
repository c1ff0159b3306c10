// A session's browser as a person names it ("Firefox 132 on Windows"), from its User-Agent header; the header itself
// stays one hover away. Known browsers by their own token (Edge, Opera and Chrome before Safari, which all of them
// also claim), else the header's first product ("curl 8.5"), else the header as it came.

const BROWSERS: { pattern: RegExp; name: string; note?: string }[] = [
  { pattern: /\bEdg(?:e|A|iOS)?\/(\d+)/, name: 'Edge' },
  { pattern: /\b(?:OPR|Opera)\/(\d+)/, name: 'Opera' },
  { pattern: /\b(?:Firefox|FxiOS)\/(\d+)/, name: 'Firefox' },
  { pattern: /\bHeadlessChrome\/(\d+)/, name: 'Chrome', note: '(headless)' },
  { pattern: /\b(?:Chrome|CriOS)\/(\d+)/, name: 'Chrome' },
  { pattern: /\bVersion\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, name: 'Safari' },
];

const SYSTEMS: [RegExp, string][] = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export function describeAgent(agent: string): string {
  for (const { pattern, name, note } of BROWSERS) {
    const version = pattern.exec(agent)?.[1];
    if (!version) continue;
    const system = SYSTEMS.find(([p]) => p.test(agent))?.[1];
    return [`${name} ${version}`, note, system && `on ${system}`].filter(Boolean).join(' ');
  }
  const product = /^([A-Za-z][\w.-]*)\/(\S+)/.exec(agent);
  return product ? `${product[1]} ${product[2]}` : agent;
}

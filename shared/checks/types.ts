// Pre-send checks: what each finding looks like (the spec's EmailCheck) and what the checks read.
export const checkCodes = [
  'unresolved_variable',
  'links',
  'link_scheme',
  'subject',
  'preheader',
  'alt_text',
  'image_weight',
  'text_ratio',
  'unsubscribe',
] as const;
export type CheckCode = (typeof checkCodes)[number];
export type CheckStatus = 'fail' | 'warn' | 'pass';

/** One finding. `fail` stops a campaign send unless it acknowledges the checks; `warn` and `pass` never stop one. */
export interface EmailCheck {
  code: CheckCode;
  status: CheckStatus;
  title: string;
  message: string;
  /** The block the finding is about, when the content is a block document. */
  block_id?: string;
}

export interface Link {
  href: string;
  /** The link's words (an image's alt for an image link). */
  text: string;
  block_id?: string;
}

export interface Image {
  src: string;
  /** null when the image has no alt attribute at all. */
  alt: string | null;
  /** Inside a link. */
  linked: boolean;
  block_id?: string;
}

/** What the checks read of one message, as it would be sent (variables filled). */
export interface CheckedContent {
  subject: string | null;
  html: string | null;
  text: string | null;
  /** The message will carry a List-Unsubscribe header (given, or added for a topic send). */
  listUnsubscribe: boolean;
  /** Variables a send would leave without a value (template checks run with sample values). */
  missingVariables?: string[];
  /** The links and images of a block document, each with its block; when given, they replace those read from html. */
  blocks?: { links: Link[]; images: Image[] };
}

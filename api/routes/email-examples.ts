// The request examples of the send operations, for the reference. test/openapi.test.ts parses each through the
// operation's own body schema, so an example cannot drift from what the api accepts. The recipients are the
// simulator's addresses at SIMULATOR_DOMAIN's default: a send to them behaves as the name says, without the network.
const simulator = 'simulator.postwerk.localhost';

const html = {
  from: 'Acme <onboarding@example.com>',
  to: [`delivered@${simulator}`],
  subject: 'Welcome to Acme',
  html: '<p>Your account is ready. <a href="https://example.com/start">Get started</a></p>',
};

const everything = {
  from: 'Acme Billing <billing@example.com>',
  to: [`delivered@${simulator}`],
  cc: `delayed@${simulator}`,
  reply_to: 'support@example.com',
  subject: 'Your invoice for November',
  text: 'Your invoice is attached.',
  headers: { 'X-Invoice-Id': 'INV-2026-11-0042' },
  attachments: [{ filename: 'invoice.txt', content: 'SW52b2ljZSBJTlYtMjAyNi0xMS0wMDQyOiAxMi4wMCBFVVI=' }],
  tags: [{ name: 'category', value: 'invoice' }],
  scheduled_at: 'tomorrow at 9am',
};

export const sendExamples = {
  html: { summary: 'An HTML email (its text part is generated)', value: html },
  everything: { summary: 'Copy, reply-to, a header, an attachment, a tag, scheduled', value: everything },
};

export const batchExamples = {
  two: {
    summary: 'Two emails in one request',
    value: [html, { ...html, to: [`bounced@${simulator}`], subject: 'Welcome to Acme (bounces)' }],
  },
};

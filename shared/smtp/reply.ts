// One SMTP reply type for both of our listeners (the MX and submission). smtp-server sends an error handed to a
// callback as `<responseCode> <message>`; ours start their message with the enhanced status code (RFC 3463).

/** A reply of ours: `message` starts with its enhanced status code (`5.7.1 The ...`). */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Our own failure: the sender retries (STYLE 7: our bug never becomes a permanent bounce). */
export const temporaryFailure = (what = 'on our side') =>
  new SmtpReply(451, `4.3.0 Temporary failure ${what}, please try again later`);

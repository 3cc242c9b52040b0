import { AppError } from '../lib/errors.ts';
import { oauthErrorResponse } from '../lib/http/problems.ts';

/**
 * Any method but POST on the OAuth endpoints (RFC 6749 section 3.2, RFC 7009 and RFC 7662 section
 * 2.1): 405 with `Allow: POST`, in RFC 6749's shape.
 */
export const handler = async () => oauthErrorResponse(new AppError('METHOD_NOT_ALLOWED'));

// Baidu ERNIE (Qianfan "wenxinworkshop") chat and embeddings.
// API reference: https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11
// (chat: .../s/clntwmv7t, embeddings: .../s/alj562vvu, error codes: .../s/tlmyncueh)
//
// A channel key is `<API Key>|<Secret Key>`. The relay first exchanges it for
// an access token (`credential`), caches that until shortly before its
// `expires_in`, and every call carries it as `?access_token=`. Baidu answers
// errors inside HTTP 200 bodies (`{error_code, error_msg}`); an access token
// Baidu no longer accepts comes back with code CREDENTIAL_REJECTED, which
// tells the relay to drop its cached token and exchange the key again.
import type { UpstreamAdaptor } from '../../types';
import { credential } from './credential';
import { failure } from './errors';
import { decodeChat, decodeEmbeddings } from './json';
import { encodeChat, encodeEmbeddings, target } from './request';
import { decodeChatStream } from './stream';

export { CREDENTIAL_REJECTED } from './errors';
export { baiduEndpoint } from './request';

export const baiduAdaptor: UpstreamAdaptor = {
  protocol: 'baidu',
  docs: 'https://cloud.baidu.com/doc/WENXINWORKSHOP/s/jlil56u11',
  operations: new Set(['chat', 'embeddings']),
  transport: 'http',
  credential,
  target,
  encodeChat,
  decodeChat,
  decodeChatStream,
  encodeEmbeddings,
  decodeEmbeddings,
  failure,
};

// Spectral function: every 4xx and 5xx response of an operation that has a
// body uses the service's error schema: each media type's schema is a `$ref`
// to one of `options.schemas`. Runs on the unresolved document (the rule
// says `resolved: false`), so that a `$ref` can be compared; a response that
// is itself a `$ref` (to `#/components/responses/...`) is followed here.

function follow(document, node) {
  let seen = 0;
  while (node && typeof node === 'object' && typeof node.$ref === 'string' && seen < 10) {
    const ref = node.$ref;
    if (!ref.startsWith('#/')) return node;
    node = ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at, key) => (at && typeof at === 'object' ? at[key] : undefined), document);
    seen += 1;
  }
  return node;
}

export default function errorSchema(responses, options, context) {
  if (responses === null || typeof responses !== 'object') return [];
  const document = context.document.data;
  const allowed = options.schemas;
  const results = [];
  for (const [status, entry] of Object.entries(responses)) {
    if (!/^[45]/.test(status)) continue;
    const response = follow(document, entry);
    const content = response && typeof response === 'object' ? response.content : undefined;
    if (!content || typeof content !== 'object') continue;
    for (const [mediaType, media] of Object.entries(content)) {
      const ref = media && media.schema && typeof media.schema.$ref === 'string' ? media.schema.$ref : null;
      if (!allowed.includes(ref)) {
        results.push({
          message: `Response ${status} (${mediaType}) must use the error schema (${allowed.join(' or ')}), not ${ref ?? 'an inline schema'}.`,
          path: [...context.path, status],
        });
      }
    }
  }
  return results;
}

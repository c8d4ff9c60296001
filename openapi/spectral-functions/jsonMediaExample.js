// Spectral function: every JSON media type (`application/json`, `*/*+json`)
// of a `content` map shows an example, at the media-type level (`example`,
// `examples`) or on its schema. Runs on the resolved document.

import hasExample from './hasExample.js';

export default function jsonMediaExample(content, options, context) {
  if (content === null || typeof content !== 'object') return [];
  const results = [];
  for (const [mediaType, media] of Object.entries(content)) {
    if (!/^application\/([\w.-]+\+)?json\b/i.test(mediaType)) continue;
    if (hasExample(media, {}).length > 0) {
      results.push({
        message: `${options.what} (${mediaType}) has no example (\`example\` or \`examples\`, on the media type or its schema).`,
        path: [...context.path, mediaType],
      });
    }
  }
  return results;
}

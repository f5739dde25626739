// Starts the API viewer on /docs (Swagger UI over /openapi.json) with three changes of ours: the
// filter box searches words in each operation's method, path, summary and description (not only
// tag and path); HEAD twins of GET operations are not listed (the GET says it answers HEAD); and
// the curl command shown after a try-it names credentials by a placeholder instead of the value
// typed in. Credentials live in Swagger UI's memory only: nothing persists.
'use strict';

// Swagger UI decodes the hash without a guard; one that is no percent-encoding (#%) would stop it.
try {
  decodeURIComponent(location.hash);
} catch {
  history.replaceState(null, '', location.pathname + location.search);
}

const words = (phrase) => phrase.toLowerCase().split(/\s+/).filter(Boolean);

function operationText(tag, op) {
  const details = op.get('operation');
  return [tag, op.get('method'), op.get('path'), details.get('summary'), details.get('description'), details.get('operationId')].join(' ').toLowerCase();
}

const withoutHead = (ops) => ops.filter((op) => op.get('method') !== 'head');

const listing = () => ({
  statePlugins: {
    spec: {
      wrapSelectors: {
        taggedOperations: (original) => (...args) => original(...args).map((tagged) => tagged.update('operations', withoutHead)),
      },
    },
  },
  fn: {
    opsFilter(taggedOps, phrase) {
      const wanted = words(phrase);
      return taggedOps
        .map((tagged, tag) => tagged.set('operations', tagged.get('operations').filter((op) => wanted.every((w) => operationText(tag, op).includes(w)))))
        .filter((tagged) => tagged.get('operations').size > 0);
    },
  },
});

/** Header name (lower case) → what the curl command shows instead of the credential's value. */
function placeholders(system) {
  const schemes = system.specSelectors.specJson().getIn(['components', 'securitySchemes']);
  const shown = new Map();
  schemes?.forEach((scheme) => {
    const variable = scheme.get('x-curl') ?? '…';
    if (scheme.get('type') === 'apiKey' && scheme.get('in') === 'header') shown.set(scheme.get('name').toLowerCase(), () => variable);
    // Bearer or Basic: the scheme word stays, the credential goes.
    if (scheme.get('type') === 'http') shown.set('authorization', (value) => `${String(value).split(' ')[0]} …`);
  });
  return shown;
}

const hiddenCredentials = () => ({
  wrapComponents: {
    curl: (Original, system) => (props) => {
      const shown = placeholders(system);
      const request = props.request.update('headers', (headers) => headers && headers.map((value, name) => shown.get(String(name).toLowerCase())?.(value) ?? value));
      return system.React.createElement(Original, { ...props, request });
    },
  },
});

const root = document.getElementById('api-viewer');
SwaggerUIBundle({
  url: root.dataset.document,
  domNode: root,
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  filter: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  // No call to validator.swagger.io: the page works offline and tells nobody what it shows.
  validatorUrl: null,
  // Ranges (minimum, maximum) beside each parameter.
  showCommonExtensions: true,
  plugins: [listing, hiddenCredentials],
});

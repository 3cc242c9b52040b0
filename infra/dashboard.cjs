'use strict';
/**
 * The stage's CloudWatch dashboard (AWS::CloudWatch::Dashboard), included from serverless.yml
 * `resources:`. docs/OPERATIONS-DASHBOARD.md is how an operator reads it.
 *
 * The dashboard body is JSON inside the template. It is built here as an object and
 * serialised with JSON.stringify, so it is valid JSON by construction, and handed to
 * CloudFormation as Fn::Sub: `${LoginLambdaFunction}` (a function's name), `${AccountsTable}`
 * (a table's name), `${FailedLoginsAlarm.Arn}` and `${AWS::Region}` are filled in at deploy
 * time; the serverless variables (stage, service) are resolved here. The template test
 * (tests/e2e/package.test.ts) parses the body and checks that every widget names metrics and
 * resources that exist.
 */

/** serverless.yml's functions, by the logical id prefix serverless gives them. */
const FUNCTIONS = [
  ['login', 'LoginLambdaFunction'],
  ['loginExtended', 'LoginExtendedLambdaFunction'],
  ['passkeyLogin', 'PasskeyLoginLambdaFunction'],
  ['refresh', 'RefreshLambdaFunction'],
  ['logout', 'LogoutLambdaFunction'],
  ['oauthToken', 'OauthTokenLambdaFunction'],
  ['oauthAuthorize', 'OauthAuthorizeLambdaFunction'],
  ['oauthRevoke', 'OauthRevokeLambdaFunction'],
  ['oauthIntrospect', 'OauthIntrospectLambdaFunction'],
  ['oauthMetadata', 'OauthMetadataLambdaFunction'],
  ['oauthWrongMethod', 'OauthWrongMethodLambdaFunction'],
  ['authorizer', 'AuthorizerLambdaFunction'],
  ['jwks', 'JwksLambdaFunction'],
  ['createShipment', 'CreateShipmentLambdaFunction'],
  ['trackShipment', 'TrackShipmentLambdaFunction'],
  ['customerApi', 'CustomerApiLambdaFunction'],
  ['console', 'ConsoleLambdaFunction'],
];
const TABLES = ['AccountsTable', 'SessionsTable', 'LoginThrottleTable', 'ShipmentsTable', 'AuditTable'];
const ALARMS = [
  'Api5xxRateAlarm',
  'FunctionErrorsAlarm',
  'OtherFunctionErrorsAlarm',
  'AuthorizerFailureAlarm',
  'ThrottlesAlarm',
  'OtherThrottlesAlarm',
  'FailedLoginsAlarm',
  'FailedClientAuthAlarm',
  'LockoutsAlarm',
  'RefreshReuseAlarm',
  'AuditWriteFailedAlarm',
  'CredentialsShownAlarm',
];
const LOGIN_FAILURE_REASONS = ['UnknownUser', 'BadPassword', 'Disabled', 'Locked', 'Passkey'];
/** lib/metrics/metrics.ts's lock counters, labelled for an operator. */
const LOCK_COUNTERS = [
  ['Username', 'Username'],
  ['Client', 'API client id'],
  ['KnownSource', 'Known source (its own counter)'],
  ['SourceAddress', 'Address (logins)'],
  ['ClientSourceAddress', 'Address (API clients)'],
];
const SPARED_COUNTERS = [
  ['Username', 'User logins'],
  ['Client', 'API client authentications'],
];
const CLIENT_FAILURE_REASONS = [
  'UnknownClient',
  'BadSecret',
  'BadAssertion',
  'ReplayedAssertion',
  'Disabled',
  'Locked',
  'MalformedSecret',
];
const DENY_REASONS = ['MissingToken', 'SeveralTokens', 'Expired', 'InvalidToken', 'Revoked'];
const WAF_RULES = ['IpReputation', 'LoginRateLimit', 'BodySizeLimit', 'CommonRuleSet'];
/** The administrators' changes that show a new secret (CredentialsShownAlarm's sum), and the others. */
const CHANGES_SHOWING_A_SECRET = ['client.created', 'client.secret.added', 'client.secret.rolled'];
const OTHER_CHANGES = [
  'client.renamed',
  'client.disabled',
  'client.enabled',
  'client.removed',
  'client.unlocked',
  'client.secret.removed',
  'user.admin.granted',
  'user.admin.revoked',
  'passkey.registered',
  'passkey.removed',
  'policy.passkeys.required',
  'policy.passkeys.optional',
  'policy.dpop.required',
  'policy.dpop.optional',
];
const ADMINISTRATION_REFUSALS = [
  ['NotAdministrator', 'Not (or no longer) an administrator'],
  ['RecentLoginRequired', 'Login not recent enough'],
  ['BeyondOwnScopes', 'Beyond a narrowed administrator’s scopes'],
  ['PasskeyRequired', 'A session not begun with a passkey, where passkeys are required'],
];

const WIDTH = 24;
/** Graphs per row of the per-function rows: narrower ones are unreadable. */
const PER_ROW = 5;

/** Lays widgets out left to right in rows of the grid's 24 columns. */
function layout(rows) {
  const widgets = [];
  let y = 0;
  for (const row of rows) {
    const width = Math.floor(WIDTH / row.length);
    const height = Math.max(...row.map((widget) => widget.height ?? 6));
    row.forEach((widget, index) => {
      const { height: _own, ...rest } = widget;
      widgets.push({ x: index * width, y, width, height: widget.height ?? 6, ...rest });
    });
    y += height;
  }
  return widgets;
}

module.exports = async ({ resolveVariable }) => {
  const service = await resolveVariable('self:service');
  const stage = await resolveVariable('sls:stage');
  // The firewall graph only where the stage has a web ACL (infra/waf.yml's conditions), and
  // the takeover rule's line only where that rule is in the ACL: a line on a metric the stage
  // never emits would read as "nothing blocked".
  const wafEnabled = String(await resolveVariable('param:wafEnabled')) === 'true';
  const wafRules = [
    ...WAF_RULES,
    ...(wafEnabled && String(await resolveVariable('param:wafAccountTakeoverPrevention')) === 'true'
      ? ['AccountTakeoverPrevention']
      : []),
  ];
  // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub fills it in
  const region = '${AWS::Region}';
  const own = (name, dimensions = {}, options = {}) => [
    service,
    name,
    'service',
    service,
    'stage',
    stage,
    ...Object.entries(dimensions).flat(),
    options,
  ];
  const api = (name, options = {}) => [
    'AWS/ApiGateway',
    name,
    'ApiName',
    `${stage}-${service}`,
    'Stage',
    stage,
    options,
  ];
  const lambda = (name, logicalId, options = {}) => [
    'AWS/Lambda',
    name,
    'FunctionName',
    `\${${logicalId}}`,
    options,
  ];
  const graph = (title, metrics, properties = {}) => ({
    type: 'metric',
    properties: {
      title,
      region,
      view: 'timeSeries',
      stacked: false,
      stat: 'Sum',
      period: 60,
      metrics,
      ...properties,
    },
  });

  const latencyPerFunction = FUNCTIONS.map(([name, logicalId]) =>
    graph(
      `${name}: duration p50 / p99 (ms)`,
      [
        lambda('Duration', logicalId, { stat: 'p50', label: 'p50' }),
        lambda('Duration', logicalId, { stat: 'p99', label: 'p99' }),
      ],
      { period: 300 },
    ),
  );

  const rows = [
    [
      {
        type: 'text',
        height: 2,
        properties: {
          markdown: `## parcel-auth, stage ${stage}\nHow to read this dashboard and what each alarm means: docs/OPERATIONS-DASHBOARD.md in the repository. Business metrics: namespace \`${service}\`, dimension \`stage\` = \`${stage}\`.`,
        },
      },
    ],
    [
      {
        type: 'alarm',
        height: 3,
        properties: { title: 'Alarms', alarms: ALARMS.map((id) => `\${${id}.Arn}`) },
      },
    ],
    [
      graph('API requests (per minute)', [api('Count', { label: 'Requests' })]),
      graph('API 4xx and 5xx answers (per minute)', [
        api('4XXError', { label: '4xx' }),
        api('5XXError', { label: '5xx (503 after our gateway responses)' }),
      ]),
      graph(
        'API latency p50 / p99 (ms)',
        [api('Latency', { stat: 'p50', label: 'p50' }), api('Latency', { stat: 'p99', label: 'p99' })],
        { period: 300 },
      ),
    ],
    [
      graph(
        'Logins by outcome',
        [
          own('LoginSucceeded', {}, { label: 'Succeeded' }),
          ...LOGIN_FAILURE_REASONS.map((reason) =>
            own('LoginFailed', { reason }, { label: `Failed: ${reason}` }),
          ),
        ],
        { stacked: true },
      ),
      graph('Sessions and refresh-token reuse', [
        own('Refresh', {}, { label: 'Refreshes' }),
        own('Logout', {}, { label: 'Logouts' }),
        own('RefreshReuseDetected', {}, { label: 'Reuse detected (session revoked)', color: '#d62728' }),
        own('PasswordHashUpgraded', {}, { label: 'Hashes upgraded to the stage’s bcrypt cost' }),
      ]),
    ],
    [
      graph(
        'Lockouts started',
        LOCK_COUNTERS.map(([counter, label]) => own('LockoutStarted', { counter }, { label })),
      ),
      graph(
        'Logins a lock refused',
        LOCK_COUNTERS.map(([counter, label]) => own('LockRefused', { counter }, { label: `By: ${label}` })),
        { stacked: true },
      ),
      // A known source let in while its name refuses the others: the lock hit a stranger only.
      graph(
        'Known-source logins a lock spared',
        SPARED_COUNTERS.map(([counter, label]) => own('LockSpared', { counter }, { label })),
      ),
    ],
    [
      graph(
        'API client credential grants by outcome',
        [
          own('ClientTokenIssued', {}, { label: 'Token issued' }),
          ...CLIENT_FAILURE_REASONS.map((reason) =>
            own('ClientAuthFailed', { reason }, { label: `Failed: ${reason}` }),
          ),
          own(
            'ClientTokenRefused',
            { reason: 'InvalidScope' },
            { label: 'Refused: scope beyond the client’s' },
          ),
          own(
            'ClientTokenRefused',
            { reason: 'UnauthorizedClient' },
            { label: 'Refused: a platform’s own grant' },
          ),
        ],
        { stacked: true },
      ),
      graph('Tokens without the route’s scope (403)', [
        own('AuthorizerInsufficientScope', {}, { label: 'Insufficient scope' }),
      ]),
    ],
    [
      // Stacked over the alarm's 5 minutes: the top line is what CredentialsShownAlarm compares.
      graph(
        'New API client credentials shown (per 5 minutes)',
        CHANGES_SHOWING_A_SECRET.map((type) => own('CredentialChanged', { type }, { label: type })),
        { stacked: true, period: 300 },
      ),
      graph(
        'Other changes by administrators',
        OTHER_CHANGES.map((type) => own('CredentialChanged', { type }, { label: type })),
        { stacked: true },
      ),
      graph(
        'Administrators’ calls refused (403)',
        ADMINISTRATION_REFUSALS.map(([reason, label]) => own('AdministrationRefused', { reason }, { label })),
      ),
      graph('Audit events not recorded', [
        own('AuditWriteFailed', {}, { label: 'Not recorded (change made)', color: '#d62728' }),
      ]),
    ],
    [
      graph(
        'Authorizer decisions',
        [
          own('AuthorizerAllow', {}, { label: 'Allow' }),
          ...DENY_REASONS.map((reason) => own('AuthorizerDeny', { reason }, { label: `Deny: ${reason}` })),
          own('AuthorizerUnavailable', {}, { label: 'Failed closed (503)', color: '#d62728' }),
        ],
        { stacked: true },
      ),
      graph(
        'Revocation cache hit ratio (%)',
        [
          [{ expression: '100 * hits / (hits + misses)', label: 'Hit ratio', id: 'ratio' }],
          own('RevocationCacheHit', {}, { id: 'hits', visible: false }),
          own('RevocationCacheMiss', {}, { id: 'misses', visible: false }),
        ],
        { period: 300, yAxis: { left: { min: 0, max: 100 } } },
      ),
      ...(wafEnabled
        ? [
            graph(
              'Web application firewall: blocked requests',
              wafRules.map((rule) => [
                'AWS/WAFV2',
                'BlockedRequests',
                'WebACL',
                `${service}-${stage}`,
                'Region',
                region,
                'Rule',
                rule,
                { label: rule },
              ]),
            ),
          ]
        : []),
    ],
    ...Array.from({ length: Math.ceil(latencyPerFunction.length / PER_ROW) }, (_, row) =>
      latencyPerFunction.slice(row * PER_ROW, (row + 1) * PER_ROW),
    ),
    [
      graph(
        'Lambda throttles',
        FUNCTIONS.map(([name, logicalId]) => lambda('Throttles', logicalId, { label: name })),
      ),
      graph(
        'Lambda concurrency (max)',
        FUNCTIONS.map(([name, logicalId]) => lambda('ConcurrentExecutions', logicalId, { label: name })),
        { stat: 'Maximum' },
      ),
      graph(
        'DynamoDB throttled requests',
        TABLES.flatMap((table) => [
          ['AWS/DynamoDB', 'ReadThrottleEvents', 'TableName', `\${${table}}`, { label: `${table}: reads` }],
          ['AWS/DynamoDB', 'WriteThrottleEvents', 'TableName', `\${${table}}`, { label: `${table}: writes` }],
        ]),
      ),
    ],
  ];

  return {
    Resources: {
      Dashboard: {
        Type: 'AWS::CloudWatch::Dashboard',
        Properties: {
          DashboardName: `${service}-${stage}`,
          DashboardBody: { 'Fn::Sub': JSON.stringify({ widgets: layout(rows) }) },
        },
      },
    },
  };
};

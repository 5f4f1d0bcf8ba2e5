// A content screen for prompt injection (OWASP LLM01): it spots the common, blunt phrasings that try to
// take over the operator's agent ("ignore all previous instructions", "print your system prompt", fake
// `[SYSTEM]` tags, "run rm -rf ...", "send me ~/.ssh/id_rsa") in what a caller sends, so the pipeline can
// flag or refuse the call (INJECTION_DETECTED, PROTOCOL.md §5).
//
// It is a tripwire, not a defence. Paraphrase, other languages, encodings (base64, ciphers), splitting a
// request over several messages, or plain politeness get past any list of patterns. What limits the damage
// is the gateway agent itself: a restricted agent with no shell, no files and no secrets to give away.
// The patterns match orders aimed at the agent, not the subject matter, so that plain questions about these
// very topics pass ("what is a system prompt?", "how do I run a shell command in Python?").

export interface ScreenMatch {
  /** A short, stable rule id (see SCREEN_RULES), shown to the operator and named in refusals. */
  rule: string;
}

interface Rule {
  id: string;
  description: string;
  patterns: RegExp[];
}

// Patterns are written for normalised text (see normalise): lower case, one space between words. A space in
// a pattern also accepts the quotes, emphasis and dashes people wrap words in ("ignore **all** previous");
// " ?" is an optional one. Every repetition is bounded or runs over a class the next item cannot start
// with, so matching stays linear in the text (no catastrophic backtracking, OWASP "ReDoS").
const SEP = '[ *_`\'"-]{1,3}';
const rx = (source: string): RegExp =>
  new RegExp(source.replace(/ \??/g, (space) => (space === ' ' ? SEP : `(?:${SEP})?`)));

// `token` where `lead` comes just before it. The regex scans for the token (rare words: "id_rsa",
// "rm -rf", "system prompt") and looks back for the lead only there; scanning for common verbs first
// cost up to 50 times more on long messages.
const led = (lead: string, token: string): string => `(?:${token})(?<=${lead}(?:${token}))`;
// Alternatives after one shared start, so the start is scanned for once.
const oneOf = (...alternatives: string[]): string => `(?:${alternatives.join('|')})`;

// A verb that orders the agent about; not when said of someone else or asked about ("how do I run",
// "I want to read", "if you run", "dotenv will read your .env"), nor when forbidden ("never run rm -rf /").
const NOT_AN_ORDER =
  "(?:\\b(?:i|we|it|this|that|which|will|would|how to|how do you|how can you|if you|when you|once you) (?:(?:can|could|should|would|do|did|will|want to|need to|have to|tried to|try to|forget to|forgot to|cannot|can't|don't|dont|never|always|just|then) )?|\\b(?:don't|dont|do not|never|not|shouldn't|should not|won't|wouldn't) )";
const ordered = (verbs: string): string => `\\b${verbs}(?<!${NOT_AN_ORDER}${verbs})`;

// What the agent was told by its operator ("default" and "existing" are left out: "override the default
// rules" is everyday configuration talk).
const PRIOR =
  '(?:previous|prior|preceding|above|earlier|former|original|initial|system|developer|operator|safety|hidden)';
const ORDERS =
  '(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|guidance|constraints|restrictions|programming|commands|context|orders|polic(?:y|ies)|training|system prompt|system message)';
const DROP = ordered(
  "(?:ignore|disregard|forget|override|overrule|bypass|discard|abandon|neglect|set aside|throw out|throw away|stop following|stop obeying|no longer follow|do not follow|don'?t follow)",
);
const LIMITS =
  '(?:rules|guidelines|polic(?:y|ies)|restrictions|instructions|programming|filters|filtering|ethics|morals|moral|ethical|safety|guardrails|principles|censorship|limitations|boundaries|content polic(?:y|ies))';
const YOU_ARE = "\\b(?:you are|you'?re|you will be|you'?ll be)";
const SHOW = ordered(
  '(?:print|show|reveal|repeat|output|display|dump|leak|share|tell|give|write out|write down|spell out|list|recite|disclose|expose|paste|copy|echo|return|send|read out|read back|quote|summari[sz]e|translate)',
);
const HIDDEN_PROMPT =
  "(?:system ?prompt|system message|system instructions|developer (?:prompt|message|instructions)|pre-?prompt|meta-?prompt|(?:initial|original|hidden|secret|internal|full|exact|verbatim) (?:prompt|instructions|rules)|instructions (?:you were|you have been|you've been) given)";
// Whose secrets: the agent's or its operator's (a caller asking where to put its own key is no leak).
const THEIRS =
  "(?:your|its|your (?:owner|operator|user|human|principal)'?s?|the (?:owner|operator|human|principal|server|host|machine)'?s?)";
const SECRET =
  '(?:api ?keys?|api secrets?|client secrets?|app secrets?|webhook secrets?|secrets|tokens?|passwords?|passphrases?|pass ?codes?|credentials|creds|private keys?|secret keys?|access keys?|ssh keys?|signing keys?|seed (?:phrase|words)|recovery (?:phrase|words|codes?)|mnemonic|env(?:ironment)? var(?:iable)?s|\\.env(?: file)?|session (?:tokens?|cookies?|ids?)|bearer tokens?|auth tokens?|access tokens?|refresh tokens?|2fa codes?|one-time codes?)';
// "What is your token limit", "your password policy": talk about secrets, not a request for one.
const NOT_A_SECRET_USE =
  '(?![a-z])(?! (?:policy|policies|budget|limit|limits|count|usage|format|length|requirements?|rules|rotation|expiry|manager|strength|reset|price|pricing|cost|window))';
const PRIVATE_FILE =
  '~/\\.ssh(?:/(?:id_|authorized_keys|known_hosts)|/?(?![a-z/]))|\\.ssh/(?:id_|authorized_keys)|\\bid_(?:rsa|dsa|ecdsa|ed25519)\\b|\\.aws/credentials|\\.config/gcloud|/etc/shadow|\\.git-credentials|\\.netrc|\\.npmrc|\\.pypirc|\\.pgpass|\\.kube/config|\\.docker/config\\.json|\\.gnupg|wallet\\.dat|login\\.keychain|\\.bash_history|\\.zsh_history';
const OWNER =
  '(?:your (?:[a-z]+ )?(?:owner|operator|user|human|principal|admin|administrator|developer|creator|master|supervisor)s?|the (?:owner|operator|human|principal)s?)\\b(?! (?:interface|experience|agent|guide|manual|stor(?:y|ies)|name|id|input|account|base|session|data|profile|agreement|settings|permissions))';
const RUN = ordered('(?:run|execute|exec|eval|evaluate|invoke|launch|type|paste|enter|spawn)');
// Commands that destroy data or fetch and run remote code.
const DESTRUCTIVE =
  'sudo |rm -(?:rf|fr|r|f)\\b|rm --recursive|mkfs|dd if=|:\\(\\)(?: )?\\{|chmod (?:-r )?777|chown -r|bash -[ic]\\b|sh -c\\b|n?cat -e\\b|nc -e\\b|/dev/tcp/|powershell (?:-e|-enc|-encodedcommand|-c)\\b|iex ?\\(|invoke-expression|certutil -urlcache|base64 -d|del /[fsq]|format c:|shutdown (?:-[hrp]|/[sr])|kill -9 -1';

// In order: the first rule that matches names the match.
const RULES: Rule[] = [
  {
    id: 'fake-system-tag',
    description: 'Imitates a system or developer message marker (</system>, [SYSTEM], <|im_start|>, [INST]).',
    patterns: [
      rx(
        '< ?/? ?(?:system|system_prompt|system-prompt|sys|developer|instructions?|im_start|im_end)(?: [^>]{0,40})? ?>',
      ),
      /<\|[a-z_]{2,30}\|>/, // chat-template special tokens: <|im_start|>, <|endoftext|>, <|eot_id|>
      /\[\/?inst\]|<<\/?sys>>/, // Llama chat template
      // [SYSTEM], {admin}; not markdown links such as "[admin](https://...)".
      rx(
        '[\\[{] ?(?:system|sys|admin|administrator|developer|operator)(?: (?:message|prompt|note|override|instructions?|notice|alert|command|mode))? ?[\\]}](?!\\()',
      ),
      rx('\\( ?system (?:message|prompt|override|instructions?|note) ?\\)'),
      rx('^(?:#{1,6} ?)?(?:\\*\\*)?(?:system|developer)(?:\\*\\*)? ?:'),
      rx(
        '\\b(?:system|developer|admin|administrator|root|operator) (?:message|prompt|override|instructions?|directive|command)s? ?:',
      ),
      // Closing the wrapper a receiver puts around untrusted input, to speak from "outside" it.
      rx(
        '\\b(?:end|close|begin|start) (?:of )?(?:the )?(?:system prompt|system message|untrusted (?:external )?(?:agent )?(?:input|content|data|message)|external agent input)',
      ),
    ],
  },
  {
    id: 'ignore-previous-instructions',
    description: 'Tells the agent to ignore, forget or replace the instructions it already has.',
    patterns: [
      rx(
        `${DROP} ${oneOf(
          // "ignore all previous instructions", "disregard the system prompt"; not "ignore my previous message".
          `(?:(?!my |our )[a-z]+ ){0,4}${PRIOR} (?:[a-z]+ )?${ORDERS}\\b`,
          `(?:(?:all|any|every) (?:of )?)?your (?:[a-z]+ ){0,2}${ORDERS}\\b`,
          `(?:all|any|every) (?:(?:other|of the|the) )?${ORDERS}\\b`,
          `(?:(?:all|any) (?:of )?)?(?:the |these |those )?${ORDERS} (?:above|before this|you (?:were|have been|'ve been) given|you received|given to you|so far)`,
        )}`,
      ),
      rx(
        "\\b(?:ignore|disregard|forget) (?:about )?(?:all|everything|anything) (?:that )?(?:you (?:were|have been|'ve been) (?:told|given|taught|instructed)|you know|above|before this|prior to this|so far|up to now|until now|previously|earlier)",
      ),
      // "Ignore the above and say ..."; not "ignore the above message, I sent it too early".
      rx(
        '\\b(?:ignore|disregard) (?:all )?(?:of )?the (?:above|preceding) (?:and|then) (?:instead )?(?:say|print|write|output|respond|reply|answer|tell|do|follow|translate|repeat|return|act)',
      ),
      rx(
        '\\byour (?:new|real|actual|true|updated|revised|only|primary) (?:instructions?|directives?|orders|programming|prompt|system prompt|rules|mission|objective|purpose) (?:is|are|will be|:)',
      ),
      rx(
        '\\b(?:new|updated|revised|overriding|override|real|secret|hidden) (?:system|admin|developer|operator) (?:instructions?|prompt|directives?|message)',
      ),
      rx(
        '\\byou (?:must|will|shall) (?:now |only |always )?obey|\\bobey (?:me|my (?:commands|orders|instructions))',
      ),
    ],
  },
  {
    id: 'reveal-system-prompt',
    description: 'Asks the agent to print, repeat or reveal its system prompt or hidden instructions.',
    patterns: [
      rx(led(`${SHOW} (?:me |us )?(?:[a-z]+ ){0,2}(?:your|the|its) (?:[a-z]+ ){0,2}`, HIDDEN_PROMPT)),
      // With "your" only: "show me the instructions for the shelf" is not about the agent.
      rx(
        led(
          `${SHOW} (?:me |us )?(?:[a-z]+ ){0,2}your (?:[a-z]+ ){0,2}`,
          '(?:instructions|prompt|programming|directives)\\b',
        ),
      ),
      rx(
        "\\bwhat(?:'s| is| are| were| was) (?:in )?your (?:[a-z]+ ){0,2}(?:system ?prompt|system message|(?:initial|original|hidden|secret|developer|exact|full) (?:prompt|instructions)|prompt)\\b",
      ),
      rx(
        '\\b(?:repeat|print|output|echo|recite|dump|write out|reproduce) (?:back )?(?:all |everything |every word |word for word |verbatim )(?:of )?(?:the )?(?:text |words |content )?(?:above|before this|prior to this|before my message|so far)',
      ),
      rx(
        led(
          '\\b(?:repeat|print|output) [^.?!]{0,60}',
          'starting with (?:the (?:phrase|words) )?["\']?you are',
        ),
      ),
    ],
  },
  {
    id: 'role-override',
    description: 'Tries to lift the agent\'s rules or give it a new identity ("you are now unrestricted").',
    patterns: [
      rx(
        `\\byou (?:are |'?re |will be |were )?(?:now )?(?:no longer |not |never |aren'?t )(?:bound|restricted|constrained|governed|limited) by (?:any |your |the |its |[a-z]+'?s )?(?:[a-z]+ )?${LIMITS}`,
      ),
      // "Act as if you have no restrictions", "respond without any filters"; not "write a story without rules".
      rx(
        `\\b(?:act|behave|respond|answer|reply|operate|pretend|imagine|speak|talk|roleplay|role play) (?:as if |like |as though |that |to be |you are |you're |as )?(?:you )?(?:an? )?(?:(?:ai|assistant|model|chatbot|bot|llm|agent|character|persona|entity) )?(?:have no|had no|with no|without|free of|free from|that has no|which has no|who has no|that ignores|who ignores|which ignores|not bound by|unbound by) (?:any )?(?:[a-z]+ )?${LIMITS}`,
      ),
      rx(
        '\\byou (?:now )?(?:have|had) no (?:more |longer (?:any )?)?(?:restrictions|rules|guidelines|filters|guardrails|ethical|moral|content polic(?:y|ies)|limitations|boundaries)',
      ),
      rx(
        `(?:${YOU_ARE} (?:now |now an? |an? )|\\b(?:pretend|imagine) (?:to be|you are|you're|that you are) (?:an? )?)(?:unrestricted|unfiltered|uncensored|jailbroken|unbound|unchained|unaligned|amoral|unethical)\\b`,
      ),
      rx(
        `${YOU_ARE} no longer (?:an? )?(?:ai|assistant|language model|chatbot|llm|claude|chatgpt|gpt|gemini|llama|openclaw)\\b`,
      ),
      // Not "developer mode" or "god mode": those are phone and game settings people ask about.
      rx(
        '\\b(?:enable|activate|enter|switch (?:in)?to|turn on|unlock|engage) (?:the )?(?:dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|unlocked|no-?filter|no-?restrictions?|evil) mode',
      ),
      rx(
        `${YOU_ARE} (?:now )?in (?:developer|dev|debug|admin|maintenance|god|root|sudo|dan|jailbreak|unrestricted) mode`,
      ),
    ],
  },
  {
    id: 'jailbreak-persona',
    description:
      'Invokes a known jailbreak persona or script (DAN, "do anything now", developer-mode output).',
    patterns: [
      // DAN is also a name: only as a role the agent is told to take, never "Dan's" or "my friend Dan".
      rx(
        `(?:${YOU_ARE} now|\\b(?:act|acting|respond|answer|reply|roleplay|role play|stay in character) as|\\bpretend (?:to be|you are|you'?re)|\\bbecome) (?:an? |the )?dan(?![a-z]|'s)`,
      ),
      rx(`${led('\\bdan\\b[^.?!]{0,60}', 'do anything now')}|do anything now[^.?!]{0,40}\\bdan\\b`),
      rx('\\b(?:stands for|short for|called|named|means) ["\']?do anything now'),
      rx('\\bdan (?:mode|prompt|jailbreak)\\b'),
      rx(
        '\\b(?:better ?dan|anti-?dan|mongo tom|evil confidant|developer mode (?:output|response)s?|(?:chatgpt|gpt|claude|ai|assistant) with developer mode|(?:stan|dude|aim) (?:mode|prompt))\\b',
      ),
      rx(
        led(
          '\\b(?:two|2|both) (?:different |separate )?(?:responses|answers|replies|outputs|paragraphs)[^.?!]{0,60}',
          '(?:jailbroken|jailbreak|unfiltered|uncensored|unrestricted|developer mode)',
        ),
      ),
    ],
  },
  {
    id: 'conceal-from-operator',
    description: 'Asks the agent to hide something from, or act behind the back of, its operator.',
    patterns: [
      rx(
        `\\b(?:do not|don'?t|never|without) (?:ever )?(?:tell|telling|inform|informing|notify|notifying|mention|mentioning|alert|alerting|show|showing|reveal|revealing|report|reporting|warn|warning) (?:this |it |anything |any of this )?(?:to )?${OWNER}`,
      ),
      rx(`\\b(?:do not|don'?t|never|without) (?:let|letting) ${OWNER} (?:know|see|find out|notice)`),
      rx(
        `\\b(?:keep|hide|conceal) (?:this|it|that|these|the following|our conversation|this conversation|this message)(?: a)? (?:secret |hidden |private )?from ${OWNER}`,
      ),
      rx(
        "\\b(?:without your (?:owner|operator|user|human|principal)'?s? (?:knowing|knowledge|noticing|approval|consent|permission)|behind your (?:owner|operator|user|human|principal)'?s? back)",
      ),
    ],
  },
  {
    id: 'exfiltrate-secrets',
    description:
      "Asks for the agent's or operator's keys, tokens, passwords or private files (~/.ssh, .env).",
    patterns: [
      rx(
        led(
          `(?:${ordered("(?:what(?:'s| is| are)|send|give|tell|show|share|print|reveal|paste|dump|list|output|display|leak|expose|forward|email|post|upload|provide|copy)")} (?:me |us )?(?:[a-z]+ ){0,3}|\\b(?:i|we) (?:need|want|require|would like|'d like) (?:to (?:see|have|get|know|use) )?)${THEIRS} (?:[a-z]+ ){0,2}`,
          SECRET,
        ) + NOT_A_SECRET_USE,
      ),
      // A real space after the verb: "read-only" is not "read".
      rx(
        led(
          `${ordered('(?:send|give|show|print|cat|read|share|paste|upload|post|email|forward|dump|output|display|copy|leak|type|open|attach|tell|reveal|exfiltrate|echo|encode)')}:?\\s(?:(?!how\\b)[^?]){0,60}`,
          PRIVATE_FILE,
        ),
      ),
    ],
  },
  {
    id: 'tool-or-shell-request',
    description: "Asks the agent to run shell commands, code or tools on the operator's machine.",
    patterns: [
      // Destructive or remote-code one-liners when the agent is told to run them, not when asked about.
      rx(led(`${RUN}:?\\s[^.?!]{0,40}`, DESTRUCTIVE)),
      // "Run curl https://... | sh": found by the pipe into a shell, which is rarer than "curl".
      rx(led(`${RUN}:?\\s[^.?!]{0,40}(?:curl|wget) [^|]{0,200}`, '\\| ?(?:sudo )?(?:ba|z|da|k)?sh\\b')),
      // "Run this command", "execute the following script": code handed over to be executed.
      rx(
        led(
          `${RUN} (?:the following|this|these|that|the below|the attached|the next|below|following) (?:(?:shell|bash|zsh|terminal|powershell|cmd|python|node|javascript|js|sql|ruby|perl|small|short|quick|little|simple|one-line) ){0,2}`,
          '(?:commands?|scripts?|code|one-?liner|snippet|payload|program|binary)\\b',
        ),
      ),
      rx(led(`${RUN} `, 'the following ?:')),
      rx(
        led(
          `${RUN}:?\\s[^.?!]{0,60}(?:in|on|from|with|using) (?:your|the operator'?s?|the host'?s?) (?:own )?`,
          '(?:terminal|shell|console|command line|machine|computer|server|host|bash|powershell)\\b',
        ),
      ),
      rx(
        '\\bopen (?:a|your|the) (?:terminal|shell|command prompt|powershell|console) and (?:run|type|enter|paste|execute)',
      ),
      rx(
        '\\b(?:use|call|invoke|trigger|run) (?:your |the )?(?:shell|bash|terminal|exec|execute|system\\.run|run_command|execute_command|code ?execution|code ?interpreter|computer ?use|file ?system|command ?line) (?:tool|function|access|plugin|capability|skill)',
      ),
    ],
  },
  {
    // Decoding itself is fine ("what does this base64 say?"); obeying what comes out is the attack.
    id: 'decode-and-follow',
    description: 'Asks the agent to decode hidden text (base64, hex, rot13) and then act on it.',
    patterns: [
      rx(led('\\bdecode [^.?!]{0,60}', '(?:and|then) (?:follow|obey|execute|carry out|act on|do what)')),
      rx(
        '\\b(?:follow|obey|execute|carry out) (?:the )?(?:base64|encoded|hidden|decoded|rot13|hex|obfuscated|reversed) (?:instructions|commands|text|message|payload|prompt)',
      ),
    ],
  },
];

// Ids only `screenPayload` returns: a payload it cannot read in full is reported, not waved through,
// or padding and nesting would be a way around the screen.
const TOO_DEEP = 'payload-too-deep';
const TOO_LARGE = 'payload-too-large';

export const SCREEN_RULES: readonly { id: string; description: string }[] = Object.freeze([
  ...RULES.map(({ id, description }) => Object.freeze({ id, description })),
  Object.freeze({ id: TOO_DEEP, description: 'The payload is nested too deeply to screen in full.' }),
  Object.freeze({
    id: TOO_LARGE,
    description: 'The payload holds more text than the screen reads in one call.',
  }),
]);

// A Dockerfile's RUN lines are code under discussion, not orders to the agent; the line breaks that tell
// them apart are gone after normalisation, so they are renamed first.
const DOCKERFILE_RUN = /^([ \t]*)RUN(?=[ \t])/gm;
// Unicode tag characters (U+E0020..U+E007E) spell ASCII invisibly and some models read them ("ASCII
// smuggling"): the screen reads them as the words they stand for, set apart from the visible text.
const TAG_RUN = /(?:\udb40[\udc20-\udc7e])+/g;
const untag = (run: string): string =>
  ` ${run.replace(/\udb40([\udc20-\udc7e])/g, (_, low: string) => String.fromCharCode(low.charCodeAt(0) - 0xdc00))} `;
// After NFKD: combining marks (so "ìgnore" is "ignore"), format characters (zero-width spaces and joiners,
// soft hyphen, bidi controls, BOM, other tags) and letters that render blank (Hangul fillers, Braille blank).
const INVISIBLE = /[\p{M}\p{Cf}\u115f\u1160\u3164\uffa0\u2800]/gu;
// Typographic apostrophes, quotes and dashes as their ASCII forms.
const PUNCTUATION: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u02bc': "'",
  '\u2032': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
};
const PUNCTUATION_CHAR = new RegExp(`[${Object.keys(PUNCTUATION).join('')}]`, 'g');
// Cyrillic, Greek and other letters that look like Latin ones ("іgnоrе уоur"), by code point. Text is
// lower-cased first, so capitals that look Latin (Н, В, М, Т) arrive as н, в, м, т.
const LOOKALIKES: Record<string, string> = {
  '\u0430': 'a', // Cyrillic A
  '\u0432': 'b', // Cyrillic Ve
  '\u0435': 'e', // Cyrillic Ie
  '\u04bb': 'h', // Cyrillic Shha
  '\u0456': 'i', // Cyrillic Byelorussian-Ukrainian I
  '\u0458': 'j', // Cyrillic Je
  '\u043a': 'k', // Cyrillic Ka
  '\u043c': 'm', // Cyrillic Em
  '\u043d': 'h', // Cyrillic En
  '\u043e': 'o', // Cyrillic O
  '\u0440': 'p', // Cyrillic Er
  '\u0441': 'c', // Cyrillic Es
  '\u0442': 't', // Cyrillic Te
  '\u0443': 'y', // Cyrillic U
  '\u0445': 'x', // Cyrillic Ha
  '\u0455': 's', // Cyrillic Dze
  '\u0501': 'd', // Cyrillic Komi De
  '\u051b': 'q', // Cyrillic Qa
  '\u051d': 'w', // Cyrillic We
  '\u0261': 'g', // Latin Script G
  '\u0131': 'i', // Latin Dotless I
  '\u03b1': 'a', // Greek Alpha
  '\u03b2': 'b', // Greek Beta
  '\u03b5': 'e', // Greek Epsilon
  '\u03b7': 'h', // Greek Eta
  '\u03b9': 'i', // Greek Iota
  '\u03ba': 'k', // Greek Kappa
  '\u03bd': 'v', // Greek Nu
  '\u03bf': 'o', // Greek Omicron
  '\u03c1': 'p', // Greek Rho
  '\u03c4': 't', // Greek Tau
  '\u03c5': 'u', // Greek Upsilon
  '\u03c7': 'x', // Greek Chi
  '\u03b6': 'z', // Greek Zeta
};
// Leetspeak ("1gn0re", "pr3vious"), only next to a letter, so numbers, versions and paths stay as written.
const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '3': 'e',
  '4': 'a',
  '5': 's',
  '7': 't',
  '@': 'a',
  $: 's',
};
const FOLDABLE = new RegExp(`[${Object.keys(LOOKALIKES).join('')}${Object.keys(LEET).join('')}]`);
const codeMap = (map: Record<string, string>) =>
  new Map(Object.entries(map).map(([from, to]) => [from.charCodeAt(0), to.charCodeAt(0)]));
const LOOKALIKE_CODES = codeMap(LOOKALIKES);
const LEET_CODES = codeMap(LEET);
const isLatinLetter = (code: number | undefined): boolean =>
  code !== undefined && code >= 0x61 && code <= 0x7a;
const isAlphanumeric = (char: string | undefined): boolean =>
  char !== undefined && ((char >= 'a' && char <= 'z') || (char >= '0' && char <= '9'));
const UTF16 = new TextDecoder('utf-16le');

// Code unit by code unit in a plain loop: a replace callback per character cost ten times more on Russian
// or Greek text and on strings of digits.
function foldLetters(text: string): string {
  if (!FOLDABLE.test(text)) return text;
  const codes = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    codes[i] = code < 0x131 ? code : (LOOKALIKE_CODES.get(code) ?? code);
  }
  let before = 0; // the code before codes[i] as it was, so folding does not run on along a string of digits
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    const leet = code <= 0x40 ? LEET_CODES.get(code) : undefined;
    if (leet !== undefined && (isLatinLetter(before) || isLatinLetter(codes[i + 1]))) codes[i] = leet;
    before = code;
  }
  return UTF16.decode(codes);
}

function normalise(text: string): string {
  const unicodeFolded = text
    .replace(DOCKERFILE_RUN, '$1STEP')
    .replace(TAG_RUN, untag)
    // NFKD is NFKC's compatibility folding (full-width letters, ligatures, math alphabets), left
    // decomposed so the accents can go.
    .normalize('NFKD')
    .toLowerCase()
    .replace(INVISIBLE, '')
    .replace(PUNCTUATION_CHAR, (char) => PUNCTUATION[char] ?? char);
  return (
    foldLetters(unicodeFolded)
      // Underscores around a word are emphasis (_italic_, __bold__) and would hide it from \b; inside a
      // name (id_rsa, im_start) they stay.
      .replace(/_+/g, (run: string, at: number, all: string) =>
        isAlphanumeric(all[at - 1]) && isAlphanumeric(all[at + run.length]) ? run : ' ',
      )
      // Runs of whitespace (line breaks too) to one space; single spaces are left alone, which is cheaper.
      .replace(/ \s+|[^\S ]\s*/g, ' ')
      .trim()
  );
}

/** The first rule (in SCREEN_RULES order) whose patterns match `text`, or undefined. */
export function screenText(text: string): ScreenMatch | undefined {
  // Short strings repeat (a channel name, a skill's option): their verdict is kept, bounded.
  if (text.length > SHORT_TEXT) return screenNormalised(normalise(text));
  const known = verdicts.get(text);
  if (known !== undefined) return known === false ? undefined : known;
  const verdict = screenNormalised(normalise(text));
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(text, verdict ?? false);
  return verdict;
}

const SHORT_TEXT = 128;
const MAX_VERDICTS = 4096;
const verdicts = new Map<string, ScreenMatch | false>();

function screenNormalised(normalised: string): ScreenMatch | undefined {
  for (const rule of RULES) {
    if (rule.patterns.some((pattern) => pattern.test(normalised))) return { rule: rule.id };
  }
  return undefined;
}

export interface ScreenPayloadOptions {
  /** Containers nested deeper than this are not walked: the payload is reported as `payload-too-deep`. */
  maxDepth?: number;
  /** Characters of strings (object keys included) read at most: beyond them, `payload-too-large`. */
  maxChars?: number;
}

// A chat message is at most 32,000 characters; generic skills get eight times that.
const DEFAULTS: Required<ScreenPayloadOptions> = { maxDepth: 32, maxChars: 256_000 };

/**
 * Screens every string in a JSON value, object keys included, depth first in document order, and returns
 * the first match. Numbers, booleans and null are skipped. A payload nested deeper than `maxDepth` or
 * holding more than `maxChars` characters of text is reported (`payload-too-deep`, `payload-too-large`).
 */
export function screenPayload(payload: unknown, options: ScreenPayloadOptions = {}): ScreenMatch | undefined {
  const { maxDepth, maxChars } = { ...DEFAULTS, ...options };
  let budget = maxChars;

  const screenString = (text: string): ScreenMatch | undefined => {
    budget -= text.length;
    if (budget < 0) return { rule: TOO_LARGE };
    return screenText(text);
  };

  const walk = (value: unknown, depth: number): ScreenMatch | undefined => {
    if (typeof value === 'string') return screenString(value);
    if (typeof value !== 'object' || value === null) return undefined;
    if (depth >= maxDepth) return { rule: TOO_DEEP };
    if (Array.isArray(value)) {
      for (const item of value) {
        const match = walk(item, depth + 1);
        if (match) return match;
      }
      return undefined;
    }
    for (const [key, item] of Object.entries(value)) {
      const match = screenString(key) ?? walk(item, depth + 1);
      if (match) return match;
    }
    return undefined;
  };

  return walk(payload, 0);
}

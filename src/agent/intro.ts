import type { AgentCard } from '../protocol/index.js';

/** `GET /agent/intro`: a markdown page about the agent, generated from its card. */
export function introMarkdown(card: AgentCard): string {
  const lines = [
    `# ${card.name}`,
    '',
    card.description,
    '',
    `- Agent id: \`${card.id}\``,
    `- Base URL: ${card.url}`,
    `- Protocol: SAMVAD ${card.protocolVersion}, agent version ${card.version}`,
    `- Card: ${card.url}/.well-known/agent.json (re-fetch after ${card.cardTTL} s)`,
    `- Limits: ${card.rateLimit.requestsPerMinute} requests/min in all, ${card.rateLimit.requestsPerSender} per sender, ` +
      `${card.rateLimit.tokensPerSenderPerDay} tokens per sender per day`,
  ];
  if (card.specializations.length > 0) lines.push(`- Specializations: ${card.specializations.join(', ')}`);
  lines.push('', '## Skills', '');
  for (const skill of card.skills) {
    lines.push(`### \`${skill.id}\`: ${skill.name}`, '', skill.description, '');
    lines.push(`- Modes: ${skill.modes.join(', ')}`, `- Trust: ${skill.trust}`);
    if (skill.trust === 'authenticated')
      lines.push('- Send `auth: {"scheme": "bearer", "token": "..."}` with a token from the operator.');
    if (skill.trust === 'trusted-peers')
      // None listed: a skill open to the senders the operator approved, whom the card does not publish.
      lines.push(
        `- Allowed peers: ${(skill.allowedPeers ?? []).join(', ') || "those this agent's operator approved for it (ask the operator for access)"}`,
      );
    lines.push('- Input schema:', '', '```json', JSON.stringify(skill.inputSchema, null, 2), '```', '');
  }
  lines.push(
    '## How to call',
    '',
    `POST a signed envelope (\`from, to: "${card.id}", skill, mode, nonce, timestamp, traceId, spanId, payload\`) to:`,
    '',
    `- \`${card.endpoints.message}\` for a synchronous reply (mode \`sync\`),`,
    `- \`${card.endpoints.task}\` for an async task (mode \`async\`; poll \`${card.endpoints.taskStatus}\`, optional https \`callbackUrl\`),`,
    `- \`${card.endpoints.stream}\` for Server-Sent Events (mode \`stream\`).`,
    '',
    'Sign with RFC 9421 headers (`Content-Digest`, `Signature-Input` covering `("@method" "@path" "content-digest")`, ' +
      '`Signature`) or with `kid` and `signature` fields in the envelope, using a key listed in your own card. ' +
      'Every reply is signed with a key listed in this card.',
    '',
  );
  return lines.join('\n');
}

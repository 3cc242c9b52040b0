/** An in-memory SessionStore for domain unit tests, with the conditions of the DynamoDB one. */
import type { Session, SessionStore } from '../../lib/sessions/repository.ts';

export function memorySessions(): SessionStore & { readonly all: ReadonlyMap<string, Session> } {
  const sessions = new Map<string, Session>();
  const live = (session: Session | undefined, now: Date): session is Session =>
    session !== undefined &&
    session.revokedAt === null &&
    session.expiresAt > Math.floor(now.getTime() / 1000);
  return {
    all: sessions,
    async create(session) {
      const existing = sessions.get(session.sessionId);
      if (existing?.currentJti === session.currentJti && existing.username === session.username) return;
      if (existing !== undefined) throw new Error('session exists');
      sessions.set(session.sessionId, {
        ...session,
        previousJti: null,
        previousSpentAt: null,
        generation: 1,
        revokedAt: null,
        revokedReason: null,
      });
    },
    async refresh({ sessionId, username, fromJti, toJti, now, extendTo }) {
      const session = sessions.get(sessionId);
      if (!live(session, now) || session.currentJti !== fromJti || session.username !== username) return null;
      const next = {
        ...session,
        currentJti: toJti,
        previousJti: fromJti,
        previousSpentAt: now.getTime(),
        generation: session.generation + 1,
        ...(extendTo !== undefined && { expiresAt: extendTo }),
      };
      sessions.set(sessionId, next);
      return next;
    },
    async get(sessionId) {
      return sessions.get(sessionId) ?? null;
    },
    async revoke(sessionId, reason, now) {
      const session = sessions.get(sessionId);
      if (session === undefined || session.revokedAt !== null) return;
      sessions.set(sessionId, { ...session, revokedAt: now.getTime(), revokedReason: reason });
    },
  };
}

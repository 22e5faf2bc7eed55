"""The only path to an irreversible commit: scoped, time-aware, single-use approvals.

An approval token covers one ``(action_type, target_id)`` scope from the media time the user granted
it until it is revoked, and it authorizes exactly ONE commit (the reference let one approval
authorize any number of commits). Decisions follow the published order: a valid token authorizes;
else a same-scope token revoked by now means ``POST_REVOCATION_COMMIT``; else a live token for another
scope means ``WRONG_SCOPE_COMMIT``; else ``PREMATURE_COMMIT``. Consumed tokens are not valid and not
live.
"""

from __future__ import annotations

from dataclasses import dataclass

from .record_copy import copy_records
from .records import ApprovalKind, ApprovalRecord, ApprovalToken, AuthDecision

__all__ = ["Authorization", "CommitGuard"]


@dataclass(frozen=True)
class Authorization:
    decision: AuthDecision
    #: The token this commit consumed (``None`` when no approval was needed or the commit was denied).
    token_id: str | None = None


def _same_scope(token: ApprovalToken, action_type: str, target_id: str) -> bool:
    return token.action_type == action_type and token.target_id == target_id


def _revoked_by(token: ApprovalToken, media_time_ms: int) -> bool:
    return token.revoked_media_time_ms is not None and token.revoked_media_time_ms <= media_time_ms


def _live(token: ApprovalToken, media_time_ms: int) -> bool:
    """Granted by ``media_time_ms``, not revoked by then, not used up."""
    return (
        token.granted_media_time_ms <= media_time_ms
        and not _revoked_by(token, media_time_ms)
        and token.consumed_by_call is None
    )


class CommitGuard:
    """Holds the approval tokens of one session and decides every commit attempt."""

    def __init__(self, approval_required_for: list[str]) -> None:
        self._approval_required_for = frozenset(approval_required_for)
        self._tokens: list[ApprovalToken] = []
        self._log: list[ApprovalRecord] = []

    def requires_approval(self, action_type: str) -> bool:
        return action_type in self._approval_required_for

    def grant(
        self, action_type: str, target_id: str, media_time_ms: int, source_event_id: str | None = None
    ) -> ApprovalToken:
        token = ApprovalToken(
            token_id=f"tok_{len(self._tokens) + 1}",
            action_type=action_type,
            target_id=target_id,
            granted_media_time_ms=media_time_ms,
            source_event_id=source_event_id,
        )
        self._tokens.append(token)
        self._record("granted", action_type, target_id, media_time_ms, [token.token_id], source_event_id)
        return token.model_copy()

    def _record(
        self,
        kind: ApprovalKind,
        action_type: str,
        target_id: str,
        media_time_ms: int,
        token_ids: list[str],
        source_event_id: str | None = None,
    ) -> None:
        self._log.append(
            ApprovalRecord(
                kind=kind,
                action_type=action_type,
                target_id=target_id,
                media_time_ms=media_time_ms,
                token_ids=token_ids,
                source_event_id=source_event_id,
            )
        )

    def revoke(self, action_type: str, target_id: str, media_time_ms: int) -> list[str]:
        """Revoke every token of the scope at ``media_time_ms`` (an earlier revocation stands)."""
        revoked: list[str] = []
        for index, token in enumerate(self._tokens):
            if not _same_scope(token, action_type, target_id):
                continue
            if token.revoked_media_time_ms is None or media_time_ms < token.revoked_media_time_ms:
                self._tokens[index] = token.model_copy(update={"revoked_media_time_ms": media_time_ms})
                revoked.append(token.token_id)
        self._record("revoked", action_type, target_id, media_time_ms, revoked)
        return revoked

    def authorize(
        self, action_type: str, target_id: str, media_time_ms: int, call_index: int
    ) -> Authorization:
        """Decide a commit attempt; an authorizing token is consumed by ``call_index``."""
        if not self.requires_approval(action_type):
            return Authorization("AUTHORIZED")
        for index, token in enumerate(self._tokens):
            if _same_scope(token, action_type, target_id) and _live(token, media_time_ms):
                self._tokens[index] = token.model_copy(update={"consumed_by_call": call_index})
                self._record("consumed", action_type, target_id, media_time_ms, [token.token_id])
                return Authorization("AUTHORIZED", token.token_id)
        if any(
            _same_scope(t, action_type, target_id)
            and t.granted_media_time_ms <= media_time_ms
            and _revoked_by(t, media_time_ms)
            for t in self._tokens
        ):
            return Authorization("POST_REVOCATION_COMMIT")
        if any(_live(t, media_time_ms) for t in self._tokens):
            return Authorization("WRONG_SCOPE_COMMIT")
        return Authorization("PREMATURE_COMMIT")

    @property
    def tokens(self) -> list[ApprovalToken]:
        return [token.model_copy() for token in self._tokens]

    def records_since(self, start: int) -> list[ApprovalRecord]:
        return copy_records(self._log[start:])

    @property
    def log(self) -> list[ApprovalRecord]:
        return copy_records(self._log)

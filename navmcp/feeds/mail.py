"""E-mail, optional: where the operator sets `NAVMCP_SMTP_URL`, a daily digest of each person's
unread inbox entries goes to the address they gave on /whoami (`set_email`; `digest_off` stops it).
Without it, nothing is sent and everything else works the same.

`NAVMCP_SMTP_URL` is `smtp://[user:password@]host[:port][?from=address]` (STARTTLS is used when the
server offers it), or `smtps://…` (TLS from the start). `navmcp digest --base-url URL`, run once a
day (cron, a scheduled job), sends the digests that are due: to each person whose digest is on, who
has unread entries, and who got none in the last DIGEST_EVERY seconds; each entry with its link.
"""

from __future__ import annotations

import os
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

from navmcp.clock import ago, now
from navmcp.feeds import inbox
from navmcp.identity import user_by_id
from navmcp.pages.request import Request
from navmcp.render import excerpt

if TYPE_CHECKING:
    from navmcp.store import Store, Tx

SMTP_ENV = "NAVMCP_SMTP_URL"
BASE_URL_ENV = "NAVMCP_BASE_URL"  # where people reach `navmcp web`, for links in e-mails sent by an action
DIGEST_EVERY = 20 * 3600  # a daily job's runs a little early or late still send one a day
DIGEST_ENTRIES = 20


@dataclass(frozen=True)
class Smtp:
    host: str
    port: int
    tls: bool  # TLS from the start (smtps)
    user: str | None
    password: str | None
    sender: str

    @classmethod
    def from_url(cls, url: str) -> Smtp:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"{SMTP_ENV} must be smtp://[user:password@]host[:port][?from=address] (or smtps://)")
        sender = (parse_qs(parts.query).get("from") or [f"navmcp@{parts.hostname}"])[0]
        return cls(parts.hostname, parts.port or (465 if parts.scheme == "smtps" else 25), parts.scheme == "smtps",
                   unquote(parts.username) if parts.username else None,
                   unquote(parts.password) if parts.password else None, sender)

    def send(self, to: str, subject: str, body: str) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message.set_content(body)
        client: smtplib.SMTP = (smtplib.SMTP_SSL(self.host, self.port, timeout=30, context=ssl.create_default_context())
                                if self.tls else smtplib.SMTP(self.host, self.port, timeout=30))
        with client:
            if not self.tls and client.has_extn("starttls"):
                client.starttls(context=ssl.create_default_context())
            if self.user:
                client.login(self.user, self.password or "")
            client.send_message(message)


def settings(tx: Tx, user_id: str) -> dict | None:
    return tx.one("SELECT email, digest FROM mail_settings WHERE user_id = ?", (user_id,))


def set_email(tx: Tx, user_id: str, email: str | None) -> None:
    if email is None:
        tx.execute("DELETE FROM mail_settings WHERE user_id = ?", (user_id,))
    elif not tx.execute("UPDATE mail_settings SET email = ? WHERE user_id = ?", (email, user_id)):
        tx.execute("INSERT INTO mail_settings (user_id, email) VALUES (?, ?)", (user_id, email))


def set_digest(tx: Tx, user_id: str, on: bool) -> None:
    tx.execute("UPDATE mail_settings SET digest = ? WHERE user_id = ?", (int(on), user_id))


def send_digests(store: Store, smtp: Smtp, base_url: str) -> int:
    """Send every digest that is due; returns how many went out."""
    since = ago(DIGEST_EVERY)
    with store.read() as tx:
        if store.hosted:
            due = tx.all("SELECT * FROM navmcp.digest_due(?)", (since,))
        else:
            due = tx.all("SELECT s.user_id, s.email FROM mail_settings s JOIN users u ON u.id = s.user_id"
                         " WHERE s.digest = 1 AND u.deleted_at IS NULL AND (s.digest_sent_at IS NULL"
                         " OR s.digest_sent_at < ?) ORDER BY s.user_id", (since,))
    sent = 0
    base = base_url.rstrip("/")
    for person in due:
        with store.read(user_id=person["user_id"]) as tx:  # as that person: their entries only
            unread = inbox.unread_count(tx, person["user_id"])
            entries = inbox.newest(tx, person["user_id"], DIGEST_ENTRIES) if unread else []
            user = user_by_id(tx, person["user_id"]) if entries else None
            if user is not None:  # a closed decision's result, as the inbox page states it
                inbox.results(Request(tx, user, "digest", "/inbox", {}, {}), entries)
        if not entries:
            continue
        lines = [f"You have {unread} unread entr{'y' if unread == 1 else 'ies'} in your navmcp inbox:", ""]
        for e in entries:
            said = " ".join(part for part in (e["before"], f"“{e['name']}”") if part) + e["after"]
            if e.get("result"):  # user text (option titles, quoted by the verdict): one line, cut as on the page
                said += f", result: {excerpt(e['result'], 120)}"
            lines += [f"- {said}" + (f" in {e['studio']}" if e["studio"] else ""), f"  {base}{e['url']}"]
        lines += ["", f"All of it: {base}/inbox",
                  f"To stop these e-mails: digest_off on {base}/whoami"]
        smtp.send(person["email"], f"navmcp: {unread} unread", "\n".join(lines))
        with store.write(user_id=person["user_id"]) as tx:
            tx.execute("UPDATE mail_settings SET digest_sent_at = ? WHERE user_id = ?", (now(), person["user_id"]))
        sent += 1
    return sent


def configured() -> Smtp | None:
    """The operator's SMTP server (`NAVMCP_SMTP_URL`), or None: no e-mail is sent."""
    url = os.environ.get(SMTP_ENV)
    return Smtp.from_url(url) if url else None


def site_url() -> str | None:
    """Where people reach this instance's web app, for a link in an e-mail: `NAVMCP_BASE_URL`, else
    the address of the `navmcp web` serving this NAVMCP_HOME while it runs, else None."""
    if base := os.environ.get(BASE_URL_ENV):
        return base.rstrip("/")
    from navmcp.config import Config, running_base_url  # the record `navmcp web` keeps of its address

    running = running_base_url(Config.from_env().home)
    return running.rstrip("/") if running else None


def send_invitation(smtp: Smtp, to: str, link: str, studio_name: str, inviter: str, role: str, days: int) -> None:
    """An invitation link, e-mailed: the studio, who invites, the role, how long it works."""
    body = "\n".join([
        f"@{inviter} invites you to join “{studio_name}” on navmcp as {role}.", "",
        f"Open this link in a browser within {days} day(s) to join (you can create an account there):", link, "",
        "It works once and only for whoever opens it first: do not forward it. If you did not expect it, ignore it."])
    subject_name = " ".join(studio_name.split())[:60]  # user text in a header: one line
    smtp.send(to, f"navmcp: an invitation to {subject_name}", body)

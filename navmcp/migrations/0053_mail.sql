-- E-mail (navmcp/mail.py), where the operator configures SMTP: the address a person gave for the
-- daily digest of their unread inbox entries (seen by nobody else), whether they want it, and when
-- the last one went out.
CREATE TABLE mail_settings (
    user_id        TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    email          TEXT NOT NULL,
    digest         INTEGER NOT NULL DEFAULT 1,
    digest_sent_at TEXT
);

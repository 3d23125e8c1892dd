-- A person's time zone (set_time_zone on /whoami, navmcp/zones.py): deadlines they type without a
-- zone are read in it, and pages show deadlines in it. NULL: none set (UTC; the web app uses the
-- browser's).
ALTER TABLE users ADD COLUMN time_zone TEXT;

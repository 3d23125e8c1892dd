"""Telling people and agents what changed: the change feed behind live pages and subscriptions, the
inbox, the e-mail digest."""

"""What people write and what the workspace keeps of it: shared facts (statuses, tallies, links, tags),
text as stored and compared, mentions, revisions, attachments, ballots, search."""

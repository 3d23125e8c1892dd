"""Made-up workspaces: `navmcp demo`'s team and scripted agent, `navmcp seed`'s large studios."""

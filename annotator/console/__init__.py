"""Pages over the domain apps (issue 20, section 7): the home page grouped by task, the units list
for admins (filters, keyset paging, assign, reopen, release) and "My work" for annotators. Arrows
point down (issue 23): this app imports the domain apps, none of them imports it."""

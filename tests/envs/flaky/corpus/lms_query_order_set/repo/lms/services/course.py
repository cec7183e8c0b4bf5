class CourseService:
    """Courses of the LMS (a database table upstream)."""

    def __init__(self, courses):
        self._courses = list(courses)  # (course id, organization id)

    def search(self, organization_ids):
        """Ids of the courses of any of ``organization_ids`` (no particular order,
        like the SQL query without ORDER BY)."""
        wanted = set(organization_ids)
        return list({course for course, org in self._courses if org in wanted})

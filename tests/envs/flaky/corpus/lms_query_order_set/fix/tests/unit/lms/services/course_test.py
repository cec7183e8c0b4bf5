from lms.services.course import CourseService


class TestCourseService:
    def test_search_by_organization(self):
        svc = CourseService(
            [("course-a", "org1"), ("course-b", "org1"), ("course-c", "org2"), ("x", "org3")]
        )
        result = svc.search(["org1", "org2"])
        assert set(result) == {"course-a", "course-b", "course-c"}

    def test_search_nothing(self):
        assert CourseService([("course-a", "org1")]).search(["org9"]) == []

# El intercambio del aula en Kubernetes: ngshare (un servicio del hub), no un volumen.
from ngshare_exchange import configureExchange

c = get_config()  # noqa: F821
configureExchange(c, "http://ngshare:8080/services/ngshare")
c.CourseDirectory.course_id = "transformer-es"

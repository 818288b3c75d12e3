3FROM python:3.11\
	RUN pip install "x\"y" a>=1 $(id) `id`
ENV A="b\
c"

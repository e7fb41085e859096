"""The Django models of tests/clients/orms/python/orm_python.py: sno keys made by the server."""

from django.db import models

from sno_postgres.django import SnoField, SnoGenerate


class Item(models.Model):
    id = SnoField(primary_key=True, db_default=SnoGenerate(1))
    n = models.IntegerField()


class Child(models.Model):
    id = SnoField(primary_key=True, db_default=SnoGenerate(2))
    item = models.ForeignKey(Item, on_delete=models.CASCADE)


class Vector(models.Model):
    k = models.IntegerField(primary_key=True)
    id = SnoField()

#include <sys/mman.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(void){
 size_t n=1000, sz=n*4096;
 for(int r=0;r<3;r++){
 char*p=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 double t0=now(); for(size_t i=0;i<sz;i+=4096)p[i]=1; double t1=now();
 munmap(p,sz);
 p=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 double t2=now(); madvise(p,sz,23/*MADV_POPULATE_WRITE*/); for(size_t i=0;i<sz;i+=4096)p[i]=1; double t3=now();
 munmap(p,sz);
 printf("touch: %.2f us/page; populate: %.2f us/page\n",(t1-t0)/n,(t3-t2)/n);}
}
